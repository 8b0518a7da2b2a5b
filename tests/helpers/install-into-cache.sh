#!/usr/bin/env bash
# Installs npm packages the tests run but the package does not depend on (the real agent CLIs,
# other Node.js runtimes) once per node_modules, into node_modules/.cache/NAME/, and prints that
# directory:
#
#   install-into-cache.sh NAME [NPM-INSTALL-OPTION…] -- SPEC…
#
# A stamp file holds what was installed (options and specs): a different list reinstalls, a fresh
# machine (or `npm ci`, which clears node_modules) downloads. Concurrent callers (test workers,
# the shell cases) wait on one lock per NAME.
set -euo pipefail

HERE=$(CDPATH='' cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
PKG=$(CDPATH='' cd -P -- "$HERE/../.." && pwd)

NAME=${1:?usage: install-into-cache.sh NAME [NPM-INSTALL-OPTION…] -- SPEC…}
shift
OPTIONS=()
while [[ $# -gt 0 && $1 != -- ]]; do
  OPTIONS+=("$1")
  shift
done
[[ ${1:-} == -- ]] && shift
SPECS=("$@")
[[ ${#SPECS[@]} -gt 0 ]] || { echo "install-into-cache.sh: no package to install into $NAME" >&2; exit 2; }

CACHE=$PKG/node_modules/.cache/$NAME
mkdir -p -- "$PKG/node_modules/.cache"
exec 9>"$CACHE.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

# Options first, so a cache installed before options existed (specs only) stays valid.
wanted="${OPTIONS[*]:+${OPTIONS[*]} }${SPECS[*]}"
stamp=$CACHE/.versions
if [[ ! -f $stamp || $(cat -- "$stamp") != "$wanted" ]]; then
  rm -rf -- "$CACHE"
  mkdir -p -- "$CACHE"
  printf '{"private": true}\n' >"$CACHE/package.json"
  (cd -- "$CACHE" && npm install --no-audit --no-fund --no-save "${OPTIONS[@]}" "${SPECS[@]}" </dev/null >&2)
  printf '%s' "$wanted" >"$stamp"
fi
printf '%s\n' "$CACHE"
