#!/bin/sh
# npm test's compile step: the build (rolldown, into dist/) and the type-check of the sources with
# the tests (tsc -p tsconfig.tests.json, no output) do not depend on each other, so they run side
# by side. Each one's output is printed whole, the build's first; the step fails when either fails.
set -u

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

npm run --silent build >"$out/build" 2>&1 &
build=$!
npm run --silent typecheck >"$out/typecheck" 2>&1 &
typecheck=$!

wait "$build"
built=$?
wait "$typecheck"
checked=$?

cat "$out/build" "$out/typecheck"
[ "$built" -eq 0 ] || echo "npm run build failed (exit $built)" >&2
[ "$checked" -eq 0 ] || echo "npm run typecheck failed (exit $checked)" >&2
[ "$built" -eq 0 ] && [ "$checked" -eq 0 ]
