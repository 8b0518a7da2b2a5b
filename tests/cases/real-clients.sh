#!/usr/bin/env bash
# Shell case (issue 4, item 9): the real clients' own loaders accept the checked-in configurations
# and start majordomus through the launcher.
#
# Claude Code, Codex, Gemini CLI and opencode (exact versions in tests/helpers/real-clients.versions)
# are installed once into node_modules/.cache/ by tests/helpers/install-real-clients.sh (not
# dependencies of the package: they are what our users run). A fresh git
# repository gets a one-rule layer, the package's four configurations and `bin/majordomus-mcp` (a
# symlink to the package's launcher). Each client runs its own `mcp list` there, with a private
# HOME that trusts the repository (each client's documented trust setting):
# - Claude Code, Gemini CLI and opencode load the configuration, start the launcher and report
#   majordomus connected (each health check is a real MCP initialize over stdio);
# - Codex loads `.codex/config.toml` and lists majordomus enabled with the launcher as its command;
#   its `mcp list` does not connect, so it starts no server, and the case asserts exactly that;
# - each of the other three did start a server (the lease's directory appeared in a repository
#   without .ai/local/), and that server has ended (no majordomus process left in the repository)
#   and removed its lease;
# - the tree is unchanged (Claude Code's own .claude/ apart).
# Prints `ok - …` / `not ok - …` per check and a closing `real-clients: N passed, N failed`.
set -euo pipefail

NAME=real-clients
PKG=$(CDPATH='' cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
CLIENT_SECONDS=${CASE_CLIENT_SECONDS:-120}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-case-XXXXXX")
TMP=$(CDPATH='' cd -P -- "$TMP" && pwd)
REPO=$TMP/repo
HOME_DIR=$TMP/home
LEASE=$REPO/.ai/local/state/mcp/server.json

cleanup() { rm -rf -- "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

passed=0
failed=0
ok() { passed=$((passed + 1)); printf 'ok - %s\n' "$1"; }
not_ok() {
  failed=$((failed + 1))
  printf 'not ok - %s\n' "$1"
  [[ $# -gt 1 ]] && printf '%s\n' "$2" | sed 's/^/#   /' | head -40
  return 0
}

# The clients, installed once per node_modules (a fresh machine downloads them there).
CLIENTS=$(bash "$PKG/tests/helpers/install-real-clients.sh")

# A fresh repository with a one-rule layer and the package's configurations.
mkdir -p -- "$REPO/.ai/repo/rules" "$REPO/.gemini" "$REPO/.codex" "$REPO/bin"
cat >"$REPO/.ai/manifest.yaml" <<'YAML'
schema: ai-repository/v1
repo: {path: .ai/repo}
local: {path: .ai/local}
YAML
printf '# Hello\n\nA rule.\n' >"$REPO/.ai/repo/rules/hello.md"
printf '.ai/local/\n' >"$REPO/.gitignore"
cp -- "$PKG/.mcp.json" "$PKG/opencode.json" "$REPO/"
cp -- "$PKG/.gemini/settings.json" "$REPO/.gemini/"
cp -- "$PKG/.codex/config.toml" "$REPO/.codex/"
ln -s -- "$PKG/bin/majordomus-mcp" "$REPO/bin/majordomus-mcp"
git -C "$REPO" init -q
git -C "$REPO" add -A
git -C "$REPO" -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -qm layer

# A private HOME that trusts the repository, as a person does once per client.
mkdir -p -- "$HOME_DIR/.gemini" "$HOME_DIR/.codex"
printf '{"projects": {"%s": {"enabledMcpjsonServers": ["majordomus"], "hasTrustDialogAccepted": true}}}\n' "$REPO" >"$HOME_DIR/.claude.json"
printf '{"%s": "TRUST_FOLDER"}\n' "$REPO" >"$HOME_DIR/.gemini/trustedFolders.json"
printf '[projects."%s"]\ntrust_level = "trusted"\n' "$REPO" >"$HOME_DIR/.codex/config.toml"

# list CLIENT: the client's own `mcp list` in the repository, output (colours stripped) on stdout.
list() {
  (cd -- "$REPO" && env HOME="$HOME_DIR" CODEX_HOME="$HOME_DIR/.codex" XDG_CONFIG_HOME="$HOME_DIR/.config" \
    XDG_DATA_HOME="$HOME_DIR/.local/share" XDG_CACHE_HOME="$HOME_DIR/.cache" NO_COLOR=1 \
    DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 MAJORDOMUS_NO_BUILD=1 \
    timeout "$CLIENT_SECONDS" "$CLIENTS/node_modules/.bin/$1" mcp list </dev/null 2>&1 || true) |
    sed 's/\x1b\[[0-9;]*m//g'
}

# A server leaves a trace of its start: the first `majordomus mcp` takes the lease, which creates
# its directory, and the directory stays when the lease is removed. Each client starts from a
# repository without .ai/local/, so the directory after its `mcp list` says a server started.
LEASE_DIR=$(dirname -- "$LEASE")
server_started() { [[ -d $LEASE_DIR ]]; }

# The majordomus processes (pid and command line) running in the repository, from /proc.
servers_running() {
  local proc cwd
  for proc in /proc/[0-9]*; do
    cwd=$(readlink -- "$proc/cwd" 2>/dev/null) || continue
    [[ $cwd == "$REPO" || $cwd == "$REPO"/* ]] || continue
    tr '\0' ' ' <"$proc/cmdline" 2>/dev/null | grep -q 'dist/src/cli/main\.js mcp' || continue
    printf '%s %s\n' "${proc#/proc/}" "$(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null)"
  done
}

# server_ended: a server was started, and it has exited and removed its lease (bounded: 30 s).
server_ended() {
  server_started || return 1
  local deadline=$((SECONDS + 30))
  while [[ -e $LEASE || -n $(servers_running) ]]; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# Why server_ended failed, as diagnostics.
server_state() {
  if ! server_started; then
    printf 'no server was started: %s was never created\n' "$LEASE_DIR"
    return
  fi
  [[ -e $LEASE ]] && printf 'the lease remains:\n%s\n' "$(cat -- "$LEASE")"
  [[ -n $(servers_running) ]] && printf 'still running:\n%s\n' "$(servers_running)"
  return 0
}

check() { # check CLIENT PATTERN WHAT
  local out
  rm -rf -- "$REPO/.ai/local"
  out=$(list "$1")
  if grep -Eq "$2" <<<"$out"; then ok "$1 $3"; else not_ok "$1 $3" "$out"; fi
  if server_ended; then
    ok "$1: the server it started has ended and removed its lease"
  else
    not_ok "$1: the server it started has ended and removed its lease" "$(server_state)"
  fi
}

check claude 'majordomus: bin/majordomus-mcp.*Connected' 'loads .mcp.json and connects to majordomus through the launcher'
check gemini 'majordomus: bin/majordomus-mcp.*Connected' 'loads .gemini/settings.json and connects to majordomus through the launcher'
check opencode 'majordomus[[:space:]]+connected' 'loads opencode.json and connects to majordomus through the launcher'

# Codex's `mcp list` reads the configuration but never starts a server (it does not connect), and
# it has no command that does without a model. So Codex is held to what its loader shows: the
# launcher command, enabled; and, said outright, that it started nothing to end.
rm -rf -- "$REPO/.ai/local"
out=$(list codex)
if grep -Eq 'majordomus[[:space:]]+bin/majordomus-mcp.*enabled' <<<"$out"; then
  ok 'codex loads .codex/config.toml and lists majordomus enabled, with the launcher as its command'
else
  not_ok 'codex loads .codex/config.toml and lists majordomus enabled, with the launcher as its command' "$out"
fi
if ! server_started && [[ -z $(servers_running) ]]; then
  ok 'codex: its mcp list starts no server (nothing to end; the launcher start is covered by the other three)'
else
  not_ok 'codex: its mcp list starts no server (if it now does, check that server as for the others)' "$(server_state)"
fi

# Claude Code keeps its own project state in .claude/; everything else must be as committed.
status=$(git -C "$REPO" status --porcelain | grep -v '^?? \.claude/$' || true)
if [[ -z $status ]]; then ok 'majordomus changed nothing in the repository (ignored files and .claude/ apart)'; else not_ok 'the repository changed' "$status"; fi

printf '%s: %d passed, %d failed\n' "$NAME" "$passed" "$failed"
[[ $failed -eq 0 ]]
