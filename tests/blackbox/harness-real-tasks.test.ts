/**
 * Which real clients use MCP tasks, measured, offline: claude, codex and gemini each start
 * majordomus (through a recorder of its stdio, tests/fixtures/harness/mcp-tee.mjs) from the
 * checkout's configuration, and the scripted model has each call majordomus_spawn once. Covers:
 * - claude agrees protocol 2025-11-25: it is told the `tasks` capability and sees spawn as an
 *   optional task, yet calls it without `params.task` and gets the synchronous answer — offering
 *   tasks changes nothing for a client that does not ask for one;
 * - codex and gemini agree 2025-06-18: no `tasks` capability, no `execution` on any tool, and
 *   the same synchronous call.
 * When a client starts asking for tasks, this test says so (docs/MCP.md, "Tasks", names them).
 */
import { appendFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentEnvironment, installedAgentClis, INSTALL_TIMEOUT_MS, runAgentTurn, type DrivableAgent } from '../helpers/agent-clis.js';
import { MAIN_JS } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/fixture-repo.js';
import { harnessFiles } from '../helpers/harness.js';
import { startModelApi, type ModelApi, type RecordedRequest } from '../helpers/model-api.js';
import { Scene } from '../helpers/shared.js';

const TEE = fileURLToPath(new URL('../fixtures/harness/mcp-tee.mjs', import.meta.url));
const TURN_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 3 * TURN_TIMEOUT_MS;

interface Recorded {
  dir: 'in' | 'out';
  frame: { id?: number | string; method?: string; params?: any; result?: any };
}

/** The tools a model request declares, with the namespace codex puts an MCP server's tools in. */
function declaredTools(request: RecordedRequest): Array<{ name: string; namespace?: string }> {
  const tools: Array<{ name: string; namespace?: string }> = [];
  const visit = (value: unknown, namespace: string | undefined): void => {
    if (Array.isArray(value)) value.forEach((item) => visit(item, namespace));
    else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const isNamespace = record.type === 'namespace' && typeof record.name === 'string';
      if (typeof record.name === 'string' && !isNamespace) tools.push({ name: record.name, ...(namespace === undefined ? {} : { namespace }) });
      const inner = isNamespace ? String(record.name) : namespace;
      for (const key of ['tools', 'functionDeclarations', 'function']) if (key in record) visit(record[key], inner);
    }
  };
  visit((request.body as { tools?: unknown } | null)?.tools, undefined);
  return tools;
}

const EXPECTED: Record<DrivableAgent, { protocol: string; tasks: boolean }> = {
  claude: { protocol: '2025-11-25', tasks: true },
  codex: { protocol: '2025-06-18', tasks: false },
  gemini: { protocol: '2025-06-18', tasks: false },
};

beforeAll(async () => {
  await installedAgentClis();
}, INSTALL_TIMEOUT_MS);

describe.each(['claude', 'codex', 'gemini'] as const)('the real %s and MCP tasks', (agent) => {
  const scene = new Scene();
  let api: ModelApi | undefined;
  let scratch: Awaited<ReturnType<typeof makeTempDir>> | undefined;
  afterEach(async () => {
    try {
      await scene.cleanup();
    } finally {
      await api?.stop();
      await scratch?.cleanup();
    }
  }, TEST_TIMEOUT_MS);

  it(
    'agrees its protocol, and calls spawn without asking for a task',
    async () => {
      scratch = await makeTempDir(`majordomus-tasks-${agent}-`);
      const home = join(scratch.path, 'home');
      await mkdir(join(home, '.codex'), { recursive: true });
      const log = join(scratch.path, 'mcp.jsonl');
      const server = { command: process.execPath, args: [TEE, MAIN_JS, 'mcp', '--http-port', '0'] };
      const repo = await scene.repo({
        files: {
          ...harnessFiles({ profiles: { worker: { agent: 'claude' } } }),
          '.mcp.json': `${JSON.stringify({ mcpServers: { majordomus: { type: 'stdio', ...server, env: { MCP_TEE_LOG: log } } } })}\n`,
          '.codex/config.toml': `[mcp_servers.majordomus]\ncommand = ${JSON.stringify(server.command)}\nargs = ${JSON.stringify(server.args)}\nstartup_timeout_sec = 120\nrequired = true\n[mcp_servers.majordomus.env]\nMCP_TEE_LOG = ${JSON.stringify(log)}\n`,
          '.gemini/settings.json': `${JSON.stringify({ mcpServers: { majordomus: { ...server, env: { MCP_TEE_LOG: log } } } })}\n`,
        },
      });
      // What claude keeps of its own in the project is not this test's business.
      scene.defer(() => rm(join(repo.root, '.claude'), { recursive: true, force: true }));
      api = await startModelApi({
        replies: (request, index) => {
          if (index > 0) return { kind: 'text', text: 'Spawned.' };
          const spawn = declaredTools(request).find((tool) => tool.name.endsWith('majordomus_spawn'));
          if (spawn === undefined) return { kind: 'error', status: 400, message: `no majordomus_spawn among ${declaredTools(request).map((t) => t.name).join(', ')}` };
          return { kind: 'tool_call', ...spawn, input: { profile: 'worker', prompt: 'answer:hello' } };
        },
      });
      const environment = await agentEnvironment(agent, { home, modelApiUrl: api.url, ...(agent === 'codex' ? { model: 'scripted-model' } : {}) });
      const prompt = 'Spawn a worker.';
      let args: string[];
      let stdin: string | null = null;
      let extra: Record<string, string> = {};
      if (agent === 'claude') {
        await writeFile(join(home, '.claude.json'), JSON.stringify({ projects: { [repo.root]: { enabledMcpjsonServers: ['majordomus'], hasTrustDialogAccepted: true } } }));
        args = ['-p', '--output-format', 'stream-json', '--verbose', '--allowedTools', 'mcp__majordomus'];
        stdin = prompt;
        extra = { MCP_CONNECTION_NONBLOCKING: 'false', ENABLE_TOOL_SEARCH: 'false' };
      } else if (agent === 'codex') {
        await appendFile(join(home, '.codex', 'config.toml'), `\n[projects.${JSON.stringify(repo.root)}]\ntrust_level = "trusted"\n`);
        args = ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', repo.root, prompt];
      } else {
        args = ['-p', prompt, '--output-format', 'stream-json', '--approval-mode', 'yolo'];
      }
      const result = await runAgentTurn(environment.command, args, {
        cwd: repo.root,
        env: { ...environment.env, ...extra },
        stdin,
        timeoutMs: TURN_TIMEOUT_MS,
      });
      expect(result.code, result.stderr.slice(-2000)).toBe(0);

      const frames = (await readFile(log, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Recorded);
      const request = (method: string): Recorded['frame'] | undefined => frames.find((r) => r.dir === 'in' && r.frame.method === method)?.frame;
      const answerTo = (id: unknown): Recorded['frame'] | undefined => frames.find((r) => r.dir === 'out' && r.frame.id === id && r.frame.method === undefined)?.frame;
      const initialize = request('initialize');
      expect(initialize?.params.protocolVersion).toBe(EXPECTED[agent].protocol);
      const agreed = answerTo(initialize?.id)?.result;
      expect(agreed.protocolVersion).toBe(EXPECTED[agent].protocol);
      expect(agreed.capabilities.tasks !== undefined).toBe(EXPECTED[agent].tasks);
      const listed = answerTo(request('tools/list')?.id)?.result.tools as Array<{ name: string; execution?: unknown }>;
      expect(listed.find((tool) => tool.name === 'majordomus_spawn')?.execution).toEqual(EXPECTED[agent].tasks ? { taskSupport: 'optional' } : undefined);

      const call = frames.find((r) => r.dir === 'in' && r.frame.method === 'tools/call' && r.frame.params?.name === 'majordomus_spawn')?.frame;
      expect(call?.params.task, 'the client asked for a task').toBeUndefined();
      expect(answerTo(call?.id)?.result.structuredContent).toMatchObject({ profile: 'worker', status: expect.stringMatching(/^(running|exited)$/) });
      expect(frames.some((r) => r.dir === 'in' && String(r.frame.method ?? '').startsWith('tasks/'))).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );
});
