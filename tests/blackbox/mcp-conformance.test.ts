/**
 * The MCP conformance suite's server scenarios against `majordomus serve`, through
 * scripts/conformance.mjs (a proxy adds the bearer token; on Node 20 a shim stands in for the
 * suite's one Node 22 import). The suite is not a dependency of the package (docs/DECISIONS.md,
 * "HTTP"): like the real agent CLIs, it is installed once per node_modules into
 * node_modules/.cache/majordomus-mcp-conformance/ (tests/helpers/install-into-cache.sh; the version
 * is CONFORMANCE below), or taken from MCP_CONFORMANCE_PREFIX where one is installed already.
 * Covers: the scenarios majordomus can pass (the rest call the suite's own fixture tools, prompts
 * and resources) each pass — logging-set-level, server-sse-polling and server-sse-multiple-streams
 * among them. tests/blackbox/http-mcp-resume.test.ts and mcp-logging.test.ts check the same
 * behaviours without the suite.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const CONFORMANCE = '@modelcontextprotocol/conformance@0.1.16';
const INSTALLER = fileURLToPath(new URL('../helpers/install-into-cache.sh', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../../scripts/conformance.mjs', import.meta.url));
const PASSING = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'dns-rebinding-protection',
  'logging-set-level',
  'server-sse-polling',
  'server-sse-multiple-streams',
];

let prefix = process.env.MCP_CONFORMANCE_PREFIX ?? '';

beforeAll(async () => {
  if (prefix !== '') return;
  const { stdout } = await promisify(execFile)('bash', [INSTALLER, 'majordomus-mcp-conformance', '--', CONFORMANCE], { timeout: 600_000 });
  prefix = stdout.trim();
}, 600_000);

describe('the MCP conformance suite', () => {
  it('passes every server scenario that needs no fixture of its own', async () => {
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile(process.execPath, [SCRIPT, prefix, ...PASSING], { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
      );
    });
    const rows = Object.fromEntries([...out.matchAll(/^([a-z0-9-]+) \| (pass|FAIL) \|/gm)].map((m) => [m[1], m[2]]));
    expect(rows, out).toEqual(Object.fromEntries(PASSING.map((name) => [name, 'pass'])));
    expect(code).toBe(0);
  }, 360_000);
});
