/** The `--help` text of every command. */
import type { CommandName } from './args.js';

const GLOBAL = `Global options:
  --repo DIR                      start the search for .ai/manifest.yaml at DIR (default: the working directory)
  --discovery vcs|filesystem      serve tracked files only (git ls-files, default) or walk the tree
  --strict                        refuse to serve a layer with diagnostics (exit 10)
  -h, --help                      this help
  --version                       print the version`;

const EXITS = `Exit codes: 0 ok · 2 usage · 10 contract unmet · 12 missing artefact · 13 internal/git/port/lease.
Logs go to stderr (MAJORDOMUS_LOG=debug|info|warn|error).`;

export const HELP: Record<CommandName | 'main', string> = {
  main: `majordomus — serve a repository's .ai layer to every coding agent in the checkout

Usage: majordomus [global options] <command> [options]

Commands:
  mcp            serve MCP on stdio (the first in a checkout becomes the shared server)
  serve          run the shared server without a stdio session
  capabilities   list, describe, show the schemas of, or validate the capability registry
  generate       write (or --check) docs/generated/*
  exec           run the built-in coding agent on the task given on stdin (JSON-line events)
  guard          install, remove or report the git guard (hooks that respect other agents' claims)
  init           set a repository up: a minimal .ai/manifest.yaml and the four clients' configurations
  doctor         say, for each client, whether it would connect, and how to fix what stops it
  open           print the live page's address with the token, and open it in a browser

${GLOBAL}

${EXITS}`,
  mcp: `Usage: majordomus mcp [--standalone | --inspect [--format text|json]] [--http-host H] [--http-port P]

Serves MCP on stdio: newline-delimited JSON-RPC on stdin/stdout; stdout carries protocol frames only.
The first mcp in a checkout becomes the shared server (HTTP projection, lease in .ai/local/state/mcp/);
later ones bridge to it.

  --standalone       serve this client alone: no port, no lease, no peers, nothing written
  --inspect          print what would be served and every diagnostic, then exit; no port, no lease
  --format text|json output of --inspect (default text)
  --http-host H      host of the shared server (default 127.0.0.1)
  --http-port P      port of the shared server (default $MAJORDOMUS_HTTP_PORT or 8741; 0 = any free port)

${GLOBAL}`,
  serve: `Usage: majordomus serve [--host H] [--port P]

Runs the shared server of this checkout without a stdio session: REST under /api/v1/, OpenAPI at
/openapi.json, Swagger UI at /docs, MCP at /mcp. If a server already runs, logs its URL and exits 0.
Serves until stdin closes (when stdin is a pipe) or a signal.

  --host H   bind address (default 127.0.0.1; a non-loopback host is warned about)
  --port P   port (default $MAJORDOMUS_HTTP_PORT or 8741; 0 = any free port)

${GLOBAL}`,
  capabilities: `Usage: majordomus capabilities list [--kind query|resource|command] [--format text|json]
       majordomus capabilities describe ID
       majordomus capabilities schema ID --side input|output
       majordomus capabilities validate

The capability registry every surface is projected from. An unknown ID exits 12.

${GLOBAL}`,
  generate: `Usage: majordomus generate [--check]

Writes docs/generated/openapi.json, docs/generated/capabilities.md and docs/generated/errors.md from
the registry and the error catalogue. With --check, writes nothing and exits 10 when a file is stale.

${GLOBAL}`,
  exec: `Usage: majordomus exec --json [--resume ID] [--model M] [--mode default|read-only] [--max-turns N]
                       [--context-tokens N] [--base-url URL [--api-key-env NAME]] < task

The built-in coding agent (the harness's agent "executor"): reads the task from stdin, works with the
tools read_file, write_file, edit_file, glob, grep, bash and ask against an OpenAI-compatible
chat-completions endpoint, and prints its events as JSON lines on stdout: session, message,
tool_call, tool_result, route, compaction, and one result whose status is completed, waiting,
max_turns, loop, error or cancelled. It exits 0 whenever it printed a result (the status says how
the turn ended) and 2 for a bad command line. Runs in the checkout of its working directory.

  --json               print JSON-line events (required: the only output format)
  --resume ID          continue the conversation ID (printed in the session event); stdin holds the
                       next task, or the answer when the last turn ended waiting on a question
  --model M            the model to ask (default: the gateway's routing)
  --mode M             default, or read-only (no tool changes a file)
  --max-turns N        model requests this turn may make (default 200)
  --context-tokens N   the model's context; compaction starts at 80% of it (default 32000)
  --base-url URL       an OpenAI-compatible base URL ending in /v1 (default: the gateway of this
                       checkout's shared server, found through its lease)
  --api-key-env NAME   the environment variable holding the key for --base-url

Environment: MAJORDOMUS_EXECUTOR_STATE (where conversations are kept; default
<local>/state/executor/), MAJORDOMUS_TASK_ID (sent as X-Majordomus-Task).`,
  guard: `Usage: majordomus guard install [--mode refuse|warn] [--hooks pre-commit,pre-push] [--format text|json]
       majordomus guard uninstall [--format text|json]
       majordomus guard status [--format text|json]
       majordomus guard run pre-commit|pre-push [-- HOOK ARGUMENTS]

The git guard (docs/GUARD.md): pre-commit and pre-push hooks that refuse a commit or push touching a
path another live agent of this checkout claimed exclusively, naming it and its intent. A hook of
your own is moved to <name>.user and still runs first; uninstall puts it back. With no shared
server running, the hooks pass silently.

  --mode refuse|warn   what the hooks do on a conflict (default refuse)
  --hooks LIST         pre-commit, pre-push, or both separated by a comma (default both)
  --format text|json   output of install, uninstall and status (default text)

run is what the hooks call; it prints to stderr only and exits 1 when it refuses.
Environment, for one command: MAJORDOMUS_GUARD=warn (warn only) or off (skip the check);
MAJORDOMUS_PEER=p3 (you are peer p3: your own claims never stop you).

${GLOBAL}`,
  init: `Usage: majordomus [--repo DIR] init [--npx | --local] [--force] [--dry-run] [--guard | --no-guard]

Sets up the repository (the top of the git work tree, or --repo DIR): writes a minimal
.ai/manifest.yaml when there is no layer (an existing one is left alone), adds .ai/local/ to
.gitignore, and merges a majordomus entry into .mcp.json (Claude Code), .gemini/settings.json
(Gemini CLI), .codex/config.toml (Codex) and opencode.json (opencode). The entry starts
\`majordomus mcp\`, found on PATH on every machine where majordomus is installed, so the files can be
committed. The other servers, comments and formatting of an existing file are kept. Running it
again changes nothing. Prints each file as created, updated or unchanged (docs/INIT.md).

  --npx        start it with \`npx -y majordomus@<major> mcp\` instead (a team that does not install globally)
  --local      name this machine's launcher (bin/majordomus-mcp) by its absolute path (a checkout of
               majordomus itself); do not commit the configurations then
  --force      replace a majordomus entry that differs from init's (without it: exit 10, nothing written)
  --dry-run    print the unified diff of every file init would create or change; write nothing
  --guard      install the git guard (majordomus guard install) too
  --no-guard   do not offer the git guard; on a terminal init asks, otherwise it prints the command

A configuration file that cannot be parsed is named and nothing is written (exit 10); an existing
entry whose command is a path that does not exist here is named as such; outside a git work tree
without --repo, exit 12. Then run majordomus doctor.

${GLOBAL}`,
  doctor: `Usage: majordomus [--repo DIR] doctor [--json] [--timeout SECONDS]

Says, for each client (Claude Code, Codex, Gemini CLI, opencode), whether it would connect to
majordomus in this repository: its configuration names majordomus, the command resolves on this
PATH, the command starts a server that answers initialize (timed; a running shared server is
attached to, as the client would), and the approval or trust the client needs. Then what every
client shares: the layer and its diagnostics, the lease (its state and mode; the token is never
printed), the git guard, Node.js, and whether uWebSockets.js loads. Each problem comes with its fix
(docs/DOCTOR.md). Reads your clients' own files; writes nothing outside the repository.

  --json             print the report as JSON: {ok, root, version, findings: [{check, client?, status, message, fix?, ms?}]}
  --timeout SECONDS  how long a started server may take to answer initialize (default 120)

Exit codes: 0 every configured client would connect · 1 at least one would not · 2 usage.

${GLOBAL}`,
  open: `Usage: majordomus open [--print]

Finds the live server of this checkout (its lease), prints the live page's address with the token
in its fragment (<url>/#token=<token>; the page keeps it in the tab and drops it from the address
bar) and opens it with the system's opener (xdg-open, open) when there is a display. No live
server exits 12 (MAJ_NO_SERVER): start one with majordomus serve.

  --print   print the address only; never open a browser

${GLOBAL}`,
};
