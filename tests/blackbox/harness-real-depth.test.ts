/**
 * The delegation limit as a real agent CLI meets it, offline: an orchestrator (an SDK client,
 * depth 0) spawns the real claude and codex through the harness in a checkout whose own MCP
 * configuration starts majordomus; the spawned CLI (depth 1) starts `majordomus mcp`, which
 * bridges to the orchestrator's server. What the CLI offers its model — the tools in its first
 * request to the scripted model API — shows what majordomus offered it:
 * - at the default max_depth 1 the spawned CLI is offered majordomus's tools but none that
 *   starts or drives agents (no spawn, no session_*, no run_task): claude's bridge reports the
 *   depth the harness stamped on it, and codex's — which Codex starts without that variable — is
 *   recognised by the server as its own agent's;
 * - under max_depth 2 it is offered them.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEnvironment, installedAgentClis, INSTALL_TIMEOUT_MS, type DrivableAgent } from '../helpers/agent-clis.js';
import { MAIN_JS } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/fixture-repo.js';
import { answer } from '../helpers/harness.js';
import { startModelApi, type ModelApi } from '../helpers/model-api.js';
import { Scene } from '../helpers/shared.js';

const TURN_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 3 * TURN_TIMEOUT_MS;

interface DeclaredTool {
  name?: string;
  function?: { name?: string };
  /** codex declares an MCP server's tools inside one `namespace` tool named after it. */
  tools?: DeclaredTool[];
}

/** The tool names a request to the model declares (`server__tool` inside a namespace), whatever the vendor's wire. */
function declaredTools(body: unknown, within = ''): string[] {
  const tools = (body as { tools?: DeclaredTool[] } | null)?.tools ?? [];
  return tools.flatMap((tool) => {
    const name = `${within}${tool.name ?? tool.function?.name ?? ''}`;
    return tool.tools === undefined ? [name] : declaredTools(tool, `${name}__`);
  });
}

/** How each CLI finds majordomus in the checkout and is allowed to start it. */
const SETUP: Record<Extract<DrivableAgent, 'claude' | 'codex'>, { model?: string; files(server: { command: string; args: string[] }): Record<string, string>; home(home: string, root: string): Promise<void>; env: Record<string, string> }> = {
  claude: {
    files: (server) => ({ '.mcp.json': `${JSON.stringify({ mcpServers: { majordomus: { type: 'stdio', ...server, env: {} } } }, null, 2)}\n` }),
    // The project's server approved once, as a person does.
    home: (home, root) => writeFile(join(home, '.claude.json'), JSON.stringify({ projects: { [root]: { enabledMcpjsonServers: ['majordomus'], hasTrustDialogAccepted: true } } })),
    // Wait for majordomus and declare its tools in the first request (no deferred tool search).
    env: { MCP_CONNECTION_NONBLOCKING: 'false', ENABLE_TOOL_SEARCH: 'false' },
  },
  codex: {
    // A model codex does not know: it declares MCP tools directly instead of behind tool_search.
    model: 'scripted-model',
    files: (server) => ({
      // As `majordomus init` writes it: Codex passes its MCP servers a fixed set of variables, not
      // MAJORDOMUS_SPAWN_DEPTH; the server recognises its own agent by its process group.
      '.codex/config.toml': `[mcp_servers.majordomus]\ncommand = ${JSON.stringify(server.command)}\nargs = ${JSON.stringify(server.args)}\nstartup_timeout_sec = 120\nrequired = true\n`,
    }),
    home: async (home, root) => {
      const { appendFile } = await import('node:fs/promises');
      await appendFile(join(home, '.codex', 'config.toml'), `\n[projects.${JSON.stringify(root)}]\ntrust_level = "trusted"\n`);
    },
    env: {},
  },
};

beforeAll(async () => {
  await installedAgentClis();
}, INSTALL_TIMEOUT_MS);

describe.each(['claude', 'codex'] as const)('a real %s spawned by the harness, meeting the delegation limit', (agent) => {
  const scene = new Scene();
  let api: ModelApi;
  let home: Awaited<ReturnType<typeof makeTempDir>>;

  beforeAll(async () => {
    api = await startModelApi({ replies: () => ({ kind: 'text', text: 'Nothing to delegate.' }) });
    home = await makeTempDir(`majordomus-depth-${agent}-home-`);
  }, TEST_TIMEOUT_MS);

  afterAll(async () => {
    try {
      await scene.cleanup();
    } finally {
      await api?.stop();
      await home?.cleanup();
    }
  }, TEST_TIMEOUT_MS);

  /** A checkout nominating the CLI, with `policy`; answers the orchestrator's client. */
  async function orchestrator(policy: Record<string, unknown>): Promise<Client> {
    const setup = SETUP[agent];
    const environment = await agentEnvironment(agent, { home: home.path, modelApiUrl: api.url, ...(setup.model ? { model: setup.model } : {}) });
    const env: Record<string, string> = { ...setup.env };
    for (const [name, value] of Object.entries(environment.env)) {
      if (value !== undefined && !['LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'SYSTEMROOT'].includes(name)) env[name] = value;
    }
    env.PATH = [environment.binDir, dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(delimiter);
    const nomination = { id: `real-${agent}`, agent, command: environment.command, model: environment.model, env, harness: { enabled: true } };
    const repo = await scene.repo({
      files: {
        ...setup.files({ command: process.execPath, args: [MAIN_JS, 'mcp'] }),
        [`.ai/repo/profiles/real-${agent}.yaml`]: `${JSON.stringify(nomination, null, 2)}\n`,
        '.ai/repo/policy.yaml': `${JSON.stringify({ harness: policy }, null, 2)}\n`,
        'README.md': '# A checkout\n',
      },
    });
    await mkdir(join(home.path, '.codex'), { recursive: true });
    await setup.home(home.path, repo.root);
    // What a CLI keeps of its own in the project (claude's local settings) is not the test's business.
    scene.defer(() => rm(join(repo.root, '.claude'), { recursive: true, force: true }));
    return (await scene.client(repo.root, { name: `orchestrator-${agent}`, env: { MAJORDOMUS_SPAWN_DEPTH: undefined } })).client;
  }

  /** Spawns the CLI for one turn; answers the tools its (only) model request declared. */
  async function toolsOffered(client: Client): Promise<string[]> {
    const before = api.modelRequests.length;
    const turn = await answer(client, 'spawn', { profile: `real-${agent}`, prompt: 'What can you delegate?', wait: true, timeout_seconds: TURN_TIMEOUT_MS / 1000 }, TURN_TIMEOUT_MS);
    expect(turn, JSON.stringify(turn)).toMatchObject({ status: 'exited', exitCode: 0, answer: 'Nothing to delegate.' });
    const requests = api.modelRequests.slice(before);
    expect(requests.length).toBeGreaterThan(0);
    return declaredTools(requests[0]?.body);
  }

  it(
    'is offered majordomus but nothing that delegates at max_depth 1, and everything under max_depth 2',
    async () => {
      const capped = await toolsOffered(await orchestrator({}));
      const majordomus = capped.filter((name) => name.includes('majordomus'));
      expect(majordomus.some((name) => name.endsWith('majordomus_peers')), capped.join(', ')).toBe(true);
      expect(majordomus.filter((name) => /majordomus_(spawn|session_|list_profiles)|run_task|reply_task|check_task|cancel_task/.test(name))).toEqual([]);

      const raised = await toolsOffered(await orchestrator({ max_depth: 2 }));
      expect(raised.some((name) => name.endsWith('majordomus_spawn')), raised.join(', ')).toBe(true);
      expect(raised.some((name) => name.endsWith('run_task'))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});
