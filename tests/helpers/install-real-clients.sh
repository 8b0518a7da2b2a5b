#!/usr/bin/env bash
# Installs the real agent CLIs (the exact versions in real-clients.versions, one npm spec a line:
# the only list of them) once per node_modules, into node_modules/.cache/majordomus-real-clients/,
# and prints that directory (tests/helpers/install-into-cache.sh does the installing). They are not
# dependencies of the package: they are what our users run.
set -euo pipefail

HERE=$(CDPATH='' cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
mapfile -t VERSIONS < <(grep -v '^[[:space:]]*$' "$HERE/real-clients.versions")
exec bash "$HERE/install-into-cache.sh" majordomus-real-clients -- "${VERSIONS[@]}"
