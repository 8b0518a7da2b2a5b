/**
 * Every harness request the server will not carry out gets a specific answer naming the fix, and
 * starts nothing — black-box, with the built executable (`mcp` clients of the MCP SDK, and
 * `serve` over REST) in temporary git repositories whose profiles run the fake agent CLI. Covers:
 * - the refusals of docs/HARNESS.md "Errors" as isError results: unknown session, a turn in
 *   flight, the live ceiling, with_config beyond model/effort/mode, the scope, a profile not
 *   nominated, a malformed cursor, a blank prompt, both or neither of prompt and file, a file or
 *   cwd outside the checkout (directly, absolutely or through a symbolic link), a prompt file
 *   too big, a command that does not exist and an agent whose CLI is not on PATH — and the order
 *   the checks run in (depth, capacity, with_config, scope, nomination, launch);
 * - (the delegation limit is tests/blackbox/harness-depth.test.ts's);
 * - schema violations (an unknown field, a wrong type) are JSON-RPC -32602, HTTP 400;
 * - every harness REST route answers 401 without the lease's token and starts nothing; with the
 *   token, spawn, read and kill work over REST and a refusal is 422 `refused`.
 */
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answer,
  harnessFiles,
  invocations,
  refusal,
  scratchDir,
  status,
  waitForInvocations,
  type ProfileSpec,
} from '../helpers/harness.js';
import { rawRequest, startServe, type RawResponse } from '../helpers/serve.js';
import { Scene, type SharedClient } from '../helpers/shared.js';

const UNKNOWN = '3b9e7f5e-1c2d-4e5f-8a9b-0c1d2e3f4a5b';

async function schemaError(run: () => Promise<unknown>): Promise<McpError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  }
  throw new Error('expected a JSON-RPC error, got an answer');
}

/** Nothing started: the session table is as it was and the fake was never run again. */
async function nothingStarted(client: SharedClient, log: string, sessions: number, runs: number): Promise<void> {
  expect((await answer(client.client, 'session_list')).sessions).toHaveLength(sessions);
  expect(await invocations(log)).toHaveLength(runs);
}

describe('harness refusals', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('refuses each fixable request with a message naming the fix, in the documented order, and serves on', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const emptyBin = await scratchDir(scene);
    const env = { FAKE_AGENT_LOG: log };
    const profiles: Record<string, ProfileSpec> = {
      worker: { agent: 'claude', env },
      quiet: { agent: 'codex', env },
      'blocked-one': { agent: 'claude', env },
      'blocked-off': { agent: 'claude', env, enabled: false },
      off: { agent: 'claude', env, enabled: false },
      'no-command': { agent: 'claude', command: '/nonexistent/claude-cli', env },
      'not-installed': { agent: 'opencode', command: null, env: { ...env, PATH: emptyBin } },
      'gemini-effort': { agent: 'gemini', effort: 'high', env },
    };
    const repo = await scene.repo({
      files: {
        ...harnessFiles({ profiles, policy: { max_live_sessions: 1, exclude_profiles: ['blocked-*'] } }),
        'prompts/task.md': 'answer:from a file\n',
        'prompts/empty.md': '   \n',
        'prompts/big.md': 'x'.repeat(1024 * 1024 + 1),
      },
      symlinks: { 'escape': '/etc' },
    });
    const owner = await scene.client(repo.root);
    const refuse = (tool: string, args: Record<string, unknown>): Promise<string> => refusal(owner.client, tool, args);

    // list_profiles: the nominated ones in scope, with what stops one from starting.
    const { profiles: listed } = await answer(owner.client, 'list_profiles');
    expect(listed.map((p: { id: string }) => p.id)).toEqual(['gemini-effort', 'no-command', 'not-installed', 'quiet', 'worker']);
    expect(listed.find((p: { id: string }) => p.id === 'no-command').error).toContain('"/nonexistent/claude-cli" was not found');
    expect(listed.find((p: { id: string }) => p.id === 'not-installed').error).toContain('the opencode CLI "opencode" was not found');

    // Unknown sessions, on every tool that takes one.
    for (const tool of ['session_status', 'session_read', 'session_kill']) {
      expect(await refuse(tool, { session: UNKNOWN })).toBe(`refused: no session ${UNKNOWN}; call session_list for the sessions of this checkout`);
    }
    expect(await refuse('session_send', { session: UNKNOWN, prompt: 'hi' })).toContain('call session_list');
    await expect(owner.client.readResource({ uri: `majordomus://sessions/${UNKNOWN}/result` })).rejects.toThrow(/call session_list/);

    // The launch: prompt, file, cwd, the CLI itself.
    expect(await refuse('spawn', { profile: 'worker', prompt: ' \n\t ' })).toContain('the prompt is blank; say what the agent should do');
    expect(await refuse('spawn', { profile: 'worker' })).toContain('give exactly one of prompt and file');
    expect(await refuse('spawn', { profile: 'worker', prompt: 'a', file: 'prompts/task.md' })).toContain('give exactly one of prompt and file');
    expect(await refuse('spawn', { profile: 'worker', file: '../outside.md' })).toContain('file "../outside.md" leads outside the checkout; give a path inside it');
    expect(await refuse('spawn', { profile: 'worker', file: '/etc/hostname' })).toContain('file "/etc/hostname" must be relative to the checkout\'s root');
    expect(await refuse('spawn', { profile: 'worker', file: 'escape/hostname' })).toContain('leads outside the checkout through a symbolic link');
    expect(await refuse('spawn', { profile: 'worker', file: 'prompts/missing.md' })).toContain('does not exist in the checkout');
    expect(await refuse('spawn', { profile: 'worker', file: 'prompts/empty.md' })).toContain('is empty; write the prompt into it');
    expect(await refuse('spawn', { profile: 'worker', file: 'prompts/big.md' })).toContain(`is ${1024 * 1024 + 1} bytes, over the ${1024 * 1024}-byte limit`);
    expect(await refuse('spawn', { profile: 'worker', prompt: 'hi', cwd: '..' })).toContain('cwd ".." leads outside the checkout');
    expect(await refuse('spawn', { profile: 'worker', prompt: 'hi', cwd: '/tmp' })).toContain('must be relative');
    expect(await refuse('spawn', { profile: 'worker', prompt: 'hi', cwd: 'escape' })).toContain('through a symbolic link');
    expect(await refuse('spawn', { profile: 'no-command', prompt: 'hi' })).toContain('cannot start claude: "/nonexistent/claude-cli" was not found; install the claude CLI or set command in profile "no-command"');
    expect(await refuse('spawn', { profile: 'not-installed', prompt: 'hi' })).toContain('"opencode" was not found on PATH; install the opencode CLI or set command in profile "not-installed"');
    expect(await refuse('spawn', { profile: 'gemini-effort', prompt: 'hi' })).toMatch(/gemini.*effort/);
    await nothingStarted(owner, log, 0, 0);

    // A prompt from a file works; the order of the checks: with_config, then scope, then nomination.
    expect(await answer(owner.client, 'spawn', { profile: 'worker', file: 'prompts/task.md', wait: true })).toMatchObject({ exitCode: 0, answer: 'from a file' });
    expect(await refuse('spawn', { profile: 'blocked-off', prompt: 'hi', with_config: { temperature: '1', model: 'x' } })).toContain(
      'with_config may set only model, effort and mode; remove "temperature"',
    );
    expect(await refuse('spawn', { profile: 'blocked-off', prompt: 'hi' })).toContain('profile "blocked-off" is outside the policy\'s harness scope');
    expect(await refuse('spawn', { profile: 'blocked-one', prompt: 'hi' })).toContain('outside the policy\'s harness scope (include_profiles / exclude_profiles in policy.yaml)');
    expect(await refuse('spawn', { profile: 'off', prompt: 'hi' })).toContain('profile "off" is not nominated for the harness (it needs harness: {enabled: true}');
    expect(await refuse('spawn', { profile: 'nobody', prompt: 'hi' })).toContain('profile "nobody" is not nominated');
    await nothingStarted(owner, log, 1, 1);

    // The live ceiling comes before everything but depth; a turn in flight; a session without an id.
    const running = await answer(owner.client, 'spawn', { profile: 'quiet', prompt: 'no-session sleep:600000' });
    await waitForInvocations(log, 2);
    const ceiling = 'spawn refused: 1 sessions are running, the most the policy allows (max_live_sessions 1); wait for one to finish or kill one (session_list, session_kill)';
    expect(await refuse('spawn', { profile: 'worker', prompt: 'hi' })).toContain(ceiling);
    expect(await refuse('spawn', { profile: 'blocked-off', prompt: 'hi', with_config: { temperature: '1' } })).toContain(ceiling);
    expect(await refuse('session_send', { session: running.session, prompt: 'hi' })).toContain(`session ${running.session} already has a turn in flight; wait (session_read with wait), read, or steer`);
    expect(await refuse('session_send', { session: running.session, prompt: 'hi', steer: true })).toContain('the agent never reported a session id');
    expect((await status(owner.client, running.session)).status).toBe('running');
    // A finished session that can be resumed is refused while the ceiling is reached too.
    const finished = (await answer(owner.client, 'session_list')).sessions.find((s: { status: string }) => s.status === 'exited').session as string;
    expect(await refuse('session_send', { session: finished, prompt: 'hi' })).toContain('max_live_sessions 1');
    await nothingStarted(owner, log, 2, 2);
    expect(await answer(owner.client, 'session_kill', { session: running.session })).toMatchObject({ action: 'terminated' });

    // Cursors: only what the server handed out.
    for (const cursor of ['bogus!', 'eyJ0IjoxLCJvIjozfQ', Buffer.from('{"t":9,"o":0}').toString('base64url'), Buffer.from('{"o":0,"t":1}').toString('base64url')]) {
      expect(await refuse('session_read', { session: finished, cursor }), cursor).toContain('malformed cursor: pass nextCursor as it was given, or omit it');
    }
    expect(await refuse('session_status', { session: finished, turn: 7 })).toContain(`session ${finished} has no turn 7; it has turns 1 to 1`);

    // Schema violations are protocol errors, not refusals.
    const unknownField = await schemaError(() => owner.client.callTool({ name: 'majordomus_spawn', arguments: { profile: 'worker', prompt: 'hi', surprise: true } }));
    expect(unknownField.code).toBe(-32602);
    expect(unknownField.message).toContain('surprise');
    expect((await schemaError(() => owner.client.callTool({ name: 'majordomus_session_read', arguments: { session: finished, tail: 'ten' } }))).code).toBe(-32602);

    // After all of that the server still serves, and starts what it is asked to.
    expect(await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'answer:still here', wait: true })).toMatchObject({ exitCode: 0, answer: 'still here' });
  });
});

describe('harness over REST', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('answers 401 on every harness route without the token and starts nothing; with it, spawns, reads and kills', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'codex', env: { FAKE_AGENT_LOG: log } } } }) });
    const server = await startServe({ cwd: repo.root });
    scene.track(server.child.pid as number);
    scene.defer(async () => {
      await server.stop();
    });
    const json = { 'Content-Type': 'application/json' };
    const request = (method: string, path: string, body?: unknown, auth = true): Promise<RawResponse> =>
      rawRequest({
        port: server.port,
        method,
        path,
        headers: { ...(body === undefined ? {} : json), ...(auth ? server.auth : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const expectError = (res: RawResponse, statusCode: number, code: string): { code: string; message: string } => {
      expect({ status: res.status, body: res.text }).toMatchObject({ status: statusCode });
      const body = res.json<{ error: { code: string; message: string } }>();
      expect(body).toEqual({ error: { code, message: expect.stringMatching(/\S/) } });
      return body.error;
    };

    // A session to aim the refused requests at: running, so a kill that got through would show.
    const spawned = await request('POST', '/api/v1/harness/spawn', { profile: 'worker', prompt: 'sleep:600000' });
    expect(spawned.status, spawned.text).toBe(200);
    const session = spawned.json().session as string;
    await waitForInvocations(log, 1);
    const q = `session=${session}`;
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/harness/profiles'],
      ['GET', '/api/v1/harness/sessions'],
      ['GET', `/api/v1/harness/sessions/status?${q}`],
      ['GET', `/api/v1/harness/sessions/read?${q}`],
      ['GET', `/api/v1/harness/sessions/resource?${q}&part=result`],
      ['POST', '/api/v1/harness/spawn', { profile: 'worker', prompt: 'answer:intruder' }],
      ['POST', '/api/v1/harness/sessions/send', { session, prompt: 'answer:intruder', steer: true }],
      ['POST', '/api/v1/harness/sessions/kill', { session }],
    ];
    for (const [method, path, body] of routes) {
      const res = await request(method, path, body, false);
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="majordomus"');
      const wrong = await rawRequest({ port: server.port, method, path, headers: { ...json, Authorization: `Bearer ${server.token}x` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      expectError(wrong, 401, 'unauthorized');
    }
    // Nothing was started, steered or killed.
    expect(await invocations(log)).toHaveLength(1);
    const list = await request('GET', '/api/v1/harness/sessions');
    expect(list.status).toBe(200);
    expect(list.json().sessions).toEqual([expect.objectContaining({ session, status: 'running' })]);

    // With the token, every route answers.
    expect((await request('GET', '/api/v1/harness/profiles')).json().profiles).toEqual([{ id: 'worker', agent: 'codex', isDefault: false }]);
    expect((await request('GET', `/api/v1/harness/sessions/status?${q}`)).json()).toMatchObject({ session, status: 'running', turn: 1 });
    const read = await request('GET', `/api/v1/harness/sessions/read?${q}&tail=5`);
    expect(read.status).toBe(200);
    expect(read.json().nextCursor).toEqual(expect.any(String));
    expect((await request('POST', '/api/v1/harness/sessions/kill', { session })).json()).toEqual({ session, action: 'terminated', wasRunning: true });
    const waited = await request('POST', '/api/v1/harness/spawn', { profile: 'worker', prompt: 'answer:over rest', wait: true });
    expect(waited.json()).toMatchObject({ status: 'exited', exitCode: 0, answer: 'over rest' });
    const resource = await request('GET', `/api/v1/harness/sessions/resource?session=${waited.json().session}&part=result`);
    expect(resource.json()).toEqual({ text: 'over rest', mimeType: 'text/plain' });
    const resumed = await request('POST', '/api/v1/harness/sessions/send', { session: waited.json().session, prompt: 'answer:again over rest', wait: true });
    expect(resumed.json()).toMatchObject({ delivery: 'resumed', turn: 2, answer: 'again over rest' });

    // Refusals are 422 refused naming the fix; schema violations 400.
    expect(expectError(await request('POST', '/api/v1/harness/spawn', { profile: 'nobody', prompt: 'hi' }), 422, 'refused').message).toContain('not nominated');
    expect(expectError(await request('GET', `/api/v1/harness/sessions/status?session=${UNKNOWN}`), 422, 'refused').message).toContain('call session_list');
    expect(expectError(await request('GET', `/api/v1/harness/sessions/read?${q}&cursor=bogus`), 422, 'refused').message).toContain('malformed cursor');
    expectError(await request('POST', '/api/v1/harness/spawn', { profile: 'worker', prompt: 'hi', surprise: 1 }), 400, 'invalid_input');
    expect(await invocations(log)).toHaveLength(3);
  });
});
