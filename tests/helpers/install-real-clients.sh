#!/usr/bin/env bash
# Installs the real agent CLIs (the exact versions in real-clients.versions, one npm spec a line:
# the only list of them) once per node_modules, into node_modules/.cache/majordomus-real-clients/,
# and prints that directory. They are not dependencies of the package: they are what our users run.
# A stamp file holds the installed list; a different list reinstalls, a fresh machine downloads.
# Concurrent callers (test workers, the real-clients shell case) wait on one lock.
set -euo pipefail

HERE=$(CDPATH='' cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
PKG=$(CDPATH='' cd -P -- "$HERE/../.." && pwd)
CLIENTS=$PKG/node_modules/.cache/majordomus-real-clients
mapfile -t VERSIONS < <(grep -v '^[[:space:]]*$' "$HERE/real-clients.versions")

mkdir -p -- "$PKG/node_modules/.cache"
exec 9>"$CLIENTS.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

stamp=$CLIENTS/.versions
if [[ ! -f $stamp || $(cat -- "$stamp") != "${VERSIONS[*]}" ]]; then
  rm -rf -- "$CLIENTS"
  mkdir -p -- "$CLIENTS"
  printf '{"private": true}\n' >"$CLIENTS/package.json"
  (cd -- "$CLIENTS" && npm install --no-audit --no-fund --no-save "${VERSIONS[@]}" </dev/null >&2)
  printf '%s' "${VERSIONS[*]}" >"$stamp"
fi
printf '%s\n' "$CLIENTS"
