# Routes what a person runs to the command that owns it (ADR 3): the executable
# (dist/src/cli/main.js, built from src/ by `npm run build`), the launcher bin/majordomus-mcp, or an
# npm script. Recipes run in this directory, so the layer served is the project's own .ai/.
# Lifecycle recipes (install, release, clean) are left to the shell tool.

set positional-arguments

majordomus := "node dist/src/cli/main.js"

# List the recipes.
default:
    @{{just_executable()}} --list --unsorted

# The build's output goes to stderr, so a recipe that depends on it keeps stdout for its
# answer (`just inspect --format json | jq …`).

# Bundle src/ and workers/ into dist/ (rolldown; `npm run typecheck` checks the types).
build:
    npm run build 1>&2

# Serve MCP on stdio through the launcher, as an MCP client starts it (installs and builds when needed).
mcp *ARGS:
    @bin/majordomus-mcp "$@"

# Run the shared server without a stdio session (logs its URL; joins a running one).
serve *ARGS: build
    {{majordomus}} serve "$@"

# Show what `mcp` would serve and every diagnostic; no port, no lease.
inspect *ARGS: build
    {{majordomus}} mcp --inspect "$@"

# List the capability registry.
capabilities: build
    {{majordomus}} capabilities list

# Describe one capability by id, e.g. `just describe objects.get`.
describe ID: build
    {{majordomus}} capabilities describe "$1"

# Check the registry builds with no violation.
validate: build
    {{majordomus}} capabilities validate

# Write docs/generated/* from the registry.
generate: build
    {{majordomus}} generate

# Fail (exit 10) when docs/generated/* is stale.
generate-check: build
    {{majordomus}} generate --check

# Run the benchmarks (the `bench` npm script); WHAT picks some of http, shared, micro, harness, executor, coordination, search-libraries, reload, page, or --quick (every one, shortened).
bench *WHAT:
    npm run bench -- "$@"

# Run the test suite as CI does, with coverage of the tests' imports and of every spawned process
# of the executable; adds a per-file table and coverage/index.html (docs/COVERAGE.md).
coverage:
    npm test -- --coverage.reporter=json-summary --coverage.reporter=text --coverage.reporter=html

# Run the whole test suite as CI does (the `test` npm script).
test:
    npm test
