#!/usr/bin/env bash
# Shell case (ADR 3, "Testing strategy"): the launcher and two clients in a fresh repository.
#
# A temporary git repository gets a minimal .ai layer (one rule), `.ai/local/` ignored, and the
# package's client configurations (.mcp.json, .gemini/settings.json, .codex/config.toml,
# opencode.json), all committed. Each configuration must parse and name the launcher. Then two
# "clients" start the real launcher (bin/majordomus-mcp, MAJORDOMUS_BIN unset, MAJORDOMUS_NO_BUILD=1
# since the build exists) in that repository with `--http-port 0`, each fed initialize,
# notifications/initialized and a majordomus_peers call through a FIFO:
# - the first becomes the shared server (`serving http…` on stderr, a lease on disk);
# - the first's peers answer names it p1, alone; the second attaches to it (`attached to the
#   shared server`), and its peers answer names it p2 and lists both;
# - both stdouts hold JSON-RPC 2.0 frames only;
# - closing both stdins ends both with exit 0 and removes the lease;
# - `git status --porcelain` shows nothing (ignored files apart).
# Prints `ok - …` / `not ok - …` per check and a closing `launcher-two-clients: N passed, N failed`.
set -euo pipefail

NAME=launcher-two-clients
PKG=$(CDPATH='' cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
LAUNCHER=$PKG/bin/majordomus-mcp
WAIT_SECONDS=${CASE_WAIT_SECONDS:-30}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-case-XXXXXX")
TMP=$(CDPATH='' cd -P -- "$TMP" && pwd)
REPO=$TMP/repo
LEASE=$REPO/.ai/local/state/mcp/server.json
PIDS=()

cleanup() {
  local pid
  exec 5>&- 6>&- 2>/dev/null || true
  for pid in ${PIDS[@]+"${PIDS[@]}"}; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in ${PIDS[@]+"${PIDS[@]}"}; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf -- "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

passed=0
failed=0
ok() { passed=$((passed + 1)); printf 'ok - %s\n' "$1"; }
not_ok() {
  failed=$((failed + 1))
  printf 'not ok - %s\n' "$1"
  shift
  local line
  for line in "$@"; do printf '%s\n' "$line" | sed 's/^/#   /'; done
}
# Prints a file indented, as diagnostics under a failed check.
show() { [[ -f $1 ]] && sed 's/^/#     /' "$1" | head -40; return 0; }

# wait_until SECONDS COMMAND...: polls COMMAND every 100 ms until it succeeds or time runs out.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# has_answer FILE ID: FILE holds a JSON-RPC answer to request ID.
has_answer() { [[ -f $1 ]] && grep -q "\"id\":$2[,}]" "$1"; }
has_text() { [[ -f $1 ]] && grep -q -- "$2" "$1"; }
gone() { ! kill -0 "$1" 2>/dev/null; }
no_lease() { [[ ! -e $LEASE ]]; }

# --- the repository -------------------------------------------------------------------------
mkdir -p "$REPO/.ai/repo/rules" "$REPO/.gemini" "$REPO/.codex"
printf 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: .ai/local}\n' >"$REPO/.ai/manifest.yaml"
printf -- '---\ntitle: Keep changes small\n---\n# Keep changes small\n\nOne concern per commit.\n' \
  >"$REPO/.ai/repo/rules/small-changes.md"
printf '.ai/local/\n' >"$REPO/.gitignore"
cp "$PKG/.mcp.json" "$REPO/.mcp.json"
cp "$PKG/.gemini/settings.json" "$REPO/.gemini/settings.json"
cp "$PKG/.codex/config.toml" "$REPO/.codex/config.toml"
cp "$PKG/opencode.json" "$REPO/opencode.json"
export GIT_OPTIONAL_LOCKS=0 GIT_TERMINAL_PROMPT=0
git -C "$REPO" init -q
git -C "$REPO" add -A
git -C "$REPO" -c user.name=case -c user.email=case@example.invalid -c commit.gpgsign=false commit -q -m 'layer and client configurations'

# --- the client configurations ---------------------------------------------------------------
# Each prints the launcher it names; the check wants `bin/majordomus-mcp`, relative to the root.
json_command() { # FILE JS-EXPRESSION over `c` (the parsed file)
  node -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const v = eval(process.argv[2]); if (typeof v !== "string") throw new Error("no command"); process.stdout.write(v);' "$1" "$2"
}
check_config() { # LABEL NAMED-COMMAND-OR-EMPTY
  if [[ $2 == bin/majordomus-mcp && -x $PKG/$2 ]]; then
    ok "$1 parses and names the launcher bin/majordomus-mcp"
  else
    not_ok "$1 parses and names the launcher bin/majordomus-mcp" "named: '${2}'"
  fi
}
check_config .mcp.json "$(json_command "$REPO/.mcp.json" \
  'c.mcpServers.majordomus.type === "stdio" ? c.mcpServers.majordomus.command : null' 2>&1 || true)"
check_config .gemini/settings.json "$(json_command "$REPO/.gemini/settings.json" \
  'c.mcpServers.majordomus.timeout >= 60000 ? c.mcpServers.majordomus.command : null' 2>&1 || true)"
check_config opencode.json "$(json_command "$REPO/opencode.json" \
  'c.mcp.majordomus.type === "local" && c.mcp.majordomus.enabled === true && c.mcp.majordomus.command.length === 1 ? c.mcp.majordomus.command[0] : null' 2>&1 || true)"
check_config .codex/config.toml "$(python3 -c '
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    server = tomllib.load(f)["mcp_servers"]["majordomus"]
assert server["startup_timeout_sec"] >= 60, "startup_timeout_sec too short"
print(server["command"], end="")
' "$REPO/.codex/config.toml" 2>&1 || true)"

# --- two clients ---------------------------------------------------------------------------
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"CLIENT","version":"1.0.0"}}}'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
PEERS='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_peers","arguments":{}}}'

# start_client NAME FD: the launcher in the repository, stdin from a FIFO held open on FD.
start_client() {
  mkfifo "$TMP/$1.in"
  (
    # The other client's FIFO must not stay open in this one, or that client never sees EOF.
    exec 5>&- 6>&-
    cd "$REPO"
    unset MAJORDOMUS_BIN MAJORDOMUS_LOG
    export MAJORDOMUS_NO_BUILD=1
    exec "$LAUNCHER" --http-port 0 <"$TMP/$1.in" >"$TMP/$1.out" 2>"$TMP/$1.err"
  ) &
  PIDS+=("$!")
  # Read-write, so opening never blocks; closing it is the client's EOF.
  eval "exec $2<>\"\$TMP/\$1.in\""
}
send() { # FD LINE...
  local fd=$1 line
  shift
  for line in "$@"; do printf '%s\n' "$line" >&"$fd"; done
}

start_client first 5
PID_FIRST=${PIDS[${#PIDS[@]} - 1]}
send 5 "${INIT/CLIENT/case-first}" "$INITIALIZED" "$PEERS"
if wait_until "$WAIT_SECONDS" has_answer "$TMP/first.out" 2 &&
  wait_until "$WAIT_SECONDS" has_text "$TMP/first.err" 'serving http' && [[ -f $LEASE ]]; then
  ok 'the first client becomes the shared server (serving http, lease written) and answers'
else
  not_ok 'the first client becomes the shared server (serving http, lease written) and answers' 'stderr:'
  show "$TMP/first.err"
fi

start_client second 6
PID_SECOND=${PIDS[${#PIDS[@]} - 1]}
send 6 "${INIT/CLIENT/case-second}" "$INITIALIZED" "$PEERS"
if wait_until "$WAIT_SECONDS" has_answer "$TMP/second.out" 2 &&
  wait_until "$WAIT_SECONDS" has_text "$TMP/second.err" 'attached to the shared server'; then
  ok 'the second client attaches to the shared server'
else
  not_ok 'the second client attaches to the shared server' 'stderr:'
  show "$TMP/second.err"
fi

# peers_verdict FILE EXPECTED: `good` when FILE's answer to majordomus_peers (id 2) is EXPECTED,
# {you, peers: [[id, client name], …]} sorted by id, or what it got instead.
peers_verdict() {
  node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
const answer = lines.map((l) => JSON.parse(l)).find((m) => m.id === 2);
const peers = answer?.result?.structuredContent;
const got = JSON.stringify({ you: peers?.you, peers: (peers?.peers ?? []).map((p) => [p.id, p.client?.name]).sort() });
process.stdout.write(got === process.argv[2] ? "good" : `want ${process.argv[2]}, got ${JSON.stringify(answer)}`);
' "$1" "$2" 2>&1 || true
}
# The first called before the second started: it is p1, alone. The second is p2 and sees both.
verdict=$(peers_verdict "$TMP/first.out" '{"you":"p1","peers":[["p1","case-first"]]}')
if [[ $verdict == good ]]; then
  ok "the first client's majordomus_peers names it p1, alone"
else
  not_ok "the first client's majordomus_peers names it p1, alone" "$verdict"
fi
verdict=$(peers_verdict "$TMP/second.out" '{"you":"p2","peers":[["p1","case-first"],["p2","case-second"]]}')
if [[ $verdict == good ]]; then
  ok "the second client's majordomus_peers names it p2 and lists both peers"
else
  not_ok "the second client's majordomus_peers names it p2 and lists both peers" "$verdict"
fi

# --- stdout is the MCP channel ---------------------------------------------------------------
frames_verdict=$(node -e '
const bad = [];
for (const file of process.argv.slice(1)) {
  const text = require("fs").readFileSync(file, "utf8");
  const lines = text.split("\n");
  if (lines.pop() !== "") bad.push(`${file}: last line not terminated`);
  if (lines.length < 2) bad.push(`${file}: ${lines.length} frames, expected 2`);
  for (const line of lines) {
    try {
      const m = JSON.parse(line);
      if (m.jsonrpc !== "2.0" || !("id" in m) || !("result" in m || "error" in m)) bad.push(`${file}: not a JSON-RPC answer: ${line}`);
    } catch { bad.push(`${file}: not JSON: ${line}`); }
  }
}
process.stdout.write(bad.length ? bad.join("\n") : "good");
' "$TMP/first.out" "$TMP/second.out" 2>&1 || true)
if [[ $frames_verdict == good ]]; then
  ok 'both stdouts hold JSON-RPC frames only'
else
  not_ok 'both stdouts hold JSON-RPC frames only' "$frames_verdict"
fi

# --- both leave ------------------------------------------------------------------------------
# The owner's client leaves first: it serves until the second leaves, then removes the lease.
exec 5>&-
serving_on=no
if wait_until "$WAIT_SECONDS" has_text "$TMP/first.err" 'serving until the last peer leaves' && ! gone "$PID_FIRST"; then
  serving_on=yes
fi
exec 6>&-
rc_first=timeout
rc_second=timeout
if wait_until "$WAIT_SECONDS" gone "$PID_FIRST"; then
  rc_first=0
  wait "$PID_FIRST" || rc_first=$?
fi
if wait_until "$WAIT_SECONDS" gone "$PID_SECOND"; then
  rc_second=0
  wait "$PID_SECOND" || rc_second=$?
fi
if [[ $serving_on == yes && $rc_first == 0 && $rc_second == 0 ]] && wait_until 5 no_lease; then
  ok 'closing both stdins ends both clients with exit 0 (the owner serving until the last peer leaves) and removes the lease'
else
  not_ok 'closing both stdins ends both clients with exit 0 (the owner serving until the last peer leaves) and removes the lease' \
    "owner served on: $serving_on, first: $rc_first, second: $rc_second, lease present: $([[ -e $LEASE ]] && echo yes || echo no)" 'first stderr:'
  show "$TMP/first.err"
  printf '#   second stderr:\n'
  show "$TMP/second.err"
fi

status=$(git -C "$REPO" status --porcelain --untracked-files=all)
if [[ -z $status ]]; then
  ok 'git status shows nothing new (the lease lived under the ignored .ai/local/)'
else
  not_ok 'git status shows nothing new (the lease lived under the ignored .ai/local/)' "$status"
fi

printf '%s: %d passed, %d failed\n' "$NAME" "$passed" "$failed"
((failed == 0))
