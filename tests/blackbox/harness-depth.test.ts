/**
 * The delegation limit, decided per MCP session at initialize — black-box, with the built
 * executable in temporary git repositories whose profiles run the fake agent CLI. Covers:
 * - a client at the limit (its depth ≥ the policy's max_depth, default 1) is offered no harness
 *   or task tool: tools/list leaves them out (usage and the rest stay), a call of one by name is
 *   JSON-RPC -32602 naming the limit, and its instructions do not point at them; the server still
 *   refuses a spawn over REST at its own depth before any other check;
 * - a raised max_depth offers them again, and the agents get the depth after the caller's;
 * - a bridge reports its own client's depth: a bridged agent at depth 1 gets none of them while
 *   the owner at depth 0 does, and a bridge whose environment names no depth is a top-level
 *   client (depth 0) even when the owner is itself a spawned agent — its agents start at depth 1;
 * - over `/mcp`, `Mcp-Spawn-Depth` decides, and a client without the header is at depth 0.
 */
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, harnessFiles, invocations, scratchDir, waitForInvocations } from '../helpers/harness.js';
import { leaseToken, rawRequest } from '../helpers/serve.js';
import { ATTACHED, bearer, HttpMcpSession, initializeBody, postMcp, Scene, SERVING_HTTP, waitForLog, type SharedClient } from '../helpers/shared.js';

/** The tools that start, drive or read agents: none is offered at the limit. */
const DELEGATING = [
  'majordomus_list_profiles',
  'majordomus_spawn',
  'majordomus_session_send',
  'majordomus_session_list',
  'majordomus_session_status',
  'majordomus_session_read',
  'majordomus_session_kill',
  'run_task',
  'reply_task',
  'check_task',
  'cancel_task',
];

async function toolNames(client: SharedClient): Promise<string[]> {
  return (await client.client.listTools()).tools.map((tool) => tool.name);
}

describe('the delegation limit, per session', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  async function checkout(policy?: Record<string, unknown>): Promise<{ root: string; log: string }> {
    const log = join(await scratchDir(scene), 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude', env: { FAKE_AGENT_LOG: log } } }, ...(policy ? { policy } : {}) }) });
    return { root: repo.root, log };
  }

  it('offers a client at the limit no harness or task tool, refuses one called by name, and leaves them out of its instructions', async () => {
    const { root, log } = await checkout();
    const deep = await scene.client(root, { env: { MAJORDOMUS_SPAWN_DEPTH: '1' } });
    const offered = await toolNames(deep);
    for (const tool of DELEGATING) expect(offered, tool).not.toContain(tool);
    expect(offered).toEqual(expect.arrayContaining(['majordomus_usage', 'majordomus_peers', 'majordomus_info']));
    expect(deep.client.getInstructions()).not.toMatch(/majordomus_spawn|majordomus_list_profiles|run_task|majordomus_session_/);

    const error = await deep.client.callTool({ name: 'majordomus_spawn', arguments: { profile: 'worker', prompt: 'hi' } }).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toContain('Unknown tool: majordomus_spawn (this session is at the delegation limit (depth 1, max 1)');

    // REST carries no depth: the server's own (1) holds, checked before anything else.
    const url = (await waitForLog(deep.stderr, SERVING_HTTP))[1] as string;
    const rest = await rawRequest({
      port: Number(new URL(url).port),
      method: 'POST',
      path: '/api/v1/harness/spawn',
      headers: { ...bearer(leaseToken(root)), 'Content-Type': 'application/json' },
      body: JSON.stringify({ profile: 'nobody', prompt: ' ', with_config: { temperature: '1' } }),
    });
    expect(rest.status).toBe(422);
    expect(rest.json<{ error: { message: string } }>().error.message).toBe('spawn refused: delegation limit (depth 1, max 1)');
    expect(await invocations(log)).toEqual([]);
  });

  it('offers them again under a raised max_depth, and starts agents at the caller\'s depth + 1', async () => {
    const { root, log } = await checkout({ max_depth: 2 });
    const deep = await scene.client(root, { env: { MAJORDOMUS_SPAWN_DEPTH: '1' } });
    expect(await toolNames(deep)).toEqual(expect.arrayContaining(DELEGATING));
    expect(deep.client.getInstructions()).toContain('majordomus_list_profiles');
    await answer(deep.client, 'spawn', { profile: 'worker', prompt: 'answer:one level deeper', wait: true });
    const [run] = await waitForInvocations(log, 1);
    expect(run?.depth).toBe('2');
  });

  it('holds a bridged client to its own depth, and takes a bridge that names none as top-level whatever the owner\'s depth', async () => {
    const { root, log } = await checkout();
    // The owner is a spawned agent (depth 1): it is offered nothing to delegate with.
    const owner = await scene.client(root, { env: { MAJORDOMUS_SPAWN_DEPTH: '1' } });
    expect(await toolNames(owner)).not.toContain('majordomus_spawn');
    const child = await scene.client(root, { env: { MAJORDOMUS_SPAWN_DEPTH: '1' } });
    await waitForLog(child.stderr, ATTACHED);
    expect(await toolNames(child)).not.toContain('majordomus_spawn');
    // A person's own client, bridged: depth 0, not the owner's 1.
    const top = await scene.client(root, { env: { MAJORDOMUS_SPAWN_DEPTH: undefined } });
    await waitForLog(top.stderr, ATTACHED);
    expect(await toolNames(top)).toEqual(expect.arrayContaining(DELEGATING));
    expect(await answer(top.client, 'spawn', { profile: 'worker', prompt: 'answer:from the top', wait: true })).toMatchObject({ exitCode: 0, answer: 'from the top' });
    const [run] = await waitForInvocations(log, 1);
    expect(run?.depth).toBe('1');
  });

  it('takes the depth of a client over /mcp from Mcp-Spawn-Depth, and 0 without it', async () => {
    const { root } = await checkout();
    const owner = await scene.client(root, { env: { MAJORDOMUS_SPAWN_DEPTH: '1' } });
    const url = (await waitForLog(owner.stderr, SERVING_HTTP))[1] as string;
    const token = leaseToken(root);
    const open = async (headers: Record<string, string>): Promise<HttpMcpSession> => {
      const res = await postMcp(url, initializeBody('http-peer'), { ...bearer(token), ...headers });
      expect(res.status, res.text).toBe(200);
      const session = new HttpMcpSession(url, res.headers['mcp-session-id'] as string, res.headers['mcp-peer-id'] as string, token);
      scene.defer(async () => {
        await session.close();
      });
      return session;
    };
    const names = async (session: HttpMcpSession): Promise<string[]> => ((await session.request('tools/list')).result.tools as Array<{ name: string }>).map((t) => t.name);
    expect(await names(await open({ 'Mcp-Spawn-Depth': '1' }))).not.toContain('majordomus_spawn');
    expect(await names(await open({}))).toContain('majordomus_spawn');
  });
});
