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
  --http-port P      port of the shared server (default 8741; 0 = any free port)

${GLOBAL}`,
  serve: `Usage: majordomus serve [--host H] [--port P]

Runs the shared server of this checkout without a stdio session: REST under /api/v1/, OpenAPI at
/openapi.json, Swagger UI at /docs, MCP at /mcp. If a server already runs, logs its URL and exits 0.
Serves until stdin closes (when stdin is a pipe) or a signal.

  --host H   bind address (default 127.0.0.1; a non-loopback host is warned about)
  --port P   port (default 8741; 0 = any free port)

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
};
