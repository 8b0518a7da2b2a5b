/**
 * Delegation end to end — black-box: the built `mcp` (owner, and a bridge where an orchestrator
 * attaches), the task tools, the harness spawning the real `majordomus exec`, whose model
 * requests go through the shared server's gateway to a scripted OpenAI-compatible server on
 * loopback. Covers:
 * - a real task: a failing unit test; the model reads the file, edits it, runs the test with bash,
 *   sees it pass and answers; the file changed, the test passes, the state is completed, the
 *   token totals are the usage the server sent, the gateway counted the same, and check_task
 *   reports its cost at the config's price;
 * - ask: the orchestrator (an SDK client through a bridge, declaring claude/channel) gets the
 *   question as progress on run_task's stream and as a channel notification; check_task says
 *   waiting with the options; reply_task resumes; the next model request carries the answer;
 * - routing seen from a task: a 429 with Retry-After fails over to the second provider and the
 *   failover is in the task's events; an explicit unknown model is an error naming it and what
 *   is available, and no provider received anything;
 * - honest states: max_turns, a tool loop, an unreachable model, a cancel — each its own state.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/harness.js';
import { conversationOf, startModelApi, type ModelApi, type ReplyScript } from '../helpers/model-api.js';
import { Scene } from '../helpers/shared.js';
import { eventsOf, EXECUTOR_PROFILE, task, transcriptOf, writeGatewayConfig, type TaskState } from '../helpers/tasks.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);

const CALC = 'export function add(a, b) {\n  return a - b;\n}\n';
const CALC_TEST = "import assert from 'node:assert/strict';\nimport { add } from './calc.mjs';\nassert.equal(add(2, 3), 5);\nconsole.log('calc tests pass');\n";

describe('delegating a task to the executor through the gateway', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  async function modelApi(replies: ReplyScript, models = ['cheap-1']): Promise<ModelApi> {
    const api = await startModelApi({ replies, models });
    scene.defer(() => api.stop());
    return api;
  }

  async function checkout(files: Record<string, string> = {}) {
    return scene.repo({ files: { '.ai/repo/profiles/executor.yaml': EXECUTOR_PROFILE, ...files } });
  }

  /** A loopback port nothing listens on. */
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  it('fixes a failing test: reads, edits, runs the test, answers; the state is completed and the tokens are the server\'s', async () => {
    const api = await modelApi([
      { kind: 'tool_call', name: 'read_file', input: { path: 'calc.mjs' }, usage: { inputTokens: 100, outputTokens: 7 } },
      { kind: 'tool_call', name: 'edit_file', input: { path: 'calc.mjs', old_string: 'return a - b;', new_string: 'return a + b;' }, usage: { inputTokens: 120, outputTokens: 9 } },
      { kind: 'tool_call', name: 'bash', input: { command: 'node calc.test.mjs' }, usage: { inputTokens: 140, outputTokens: 11 } },
      { kind: 'text', text: 'Fixed add(): it subtracted. node calc.test.mjs passes now.', usage: { inputTokens: 160, outputTokens: 13 } },
    ]);
    const repo = await checkout({ 'calc.mjs': CALC, 'calc.test.mjs': CALC_TEST });
    await expect(run(process.execPath, ['calc.test.mjs'], { cwd: repo.root })).rejects.toThrow();
    await writeGatewayConfig(repo.root, { scripted: { api, models: ['cheap-1'] } });
    const configPath = join(repo.root, '.ai/local/executor.yaml');
    const priced = { ...JSON.parse(await readFile(configPath, 'utf8')), prices: { currency: 'USD', models: { 'scripted/*': { input_per_million: 1.5, output_per_million: 6 } } } };
    await writeFile(configPath, JSON.stringify(priced));
    const owner = await scene.client(repo.root);

    const state = await task(owner.client, 'run_task', { task: 'Fix add() in calc.mjs so that calc.test.mjs passes; run the test.', wait: true, timeout_seconds: 150 });
    expect(state, JSON.stringify(state)).toMatchObject({ status: 'completed', turns: 4, token_totals: { prompt_tokens: 520, completion_tokens: 40 } });
    expect(state.result).toContain('passes now');
    expect(state.last_tool).toContain('bash');
    expect(state.error).toBeUndefined();

    expect(await readFile(join(repo.root, 'calc.mjs'), 'utf8')).toContain('return a + b;');
    const passed = await run(process.execPath, ['calc.test.mjs'], { cwd: repo.root });
    expect(passed.stdout).toContain('calc tests pass');
    await scene.rebaseline(repo);

    // What the model saw: the file, the diff, the test's output, in that order.
    expect(api.modelRequests).toHaveLength(4);
    const last = conversationOf(api.modelRequests[3]!);
    expect(last.filter((m) => m.role === 'tool').map((m) => m.text).join('\n')).toContain('calc tests pass');
    expect(api.problems).toEqual([]);

    // The gateway counted the same requests for this task and its provider.
    const checked = await task(owner.client, 'check_task', { task_id: state.task_id });
    expect(checked).toMatchObject({ status: 'completed', gateway: { requests: 4, prompt_tokens: 520, completion_tokens: 40, failovers: 0 } });
    // Priced at 1.5 in and 6 out per million: 520 * 1.5 + 40 * 6 = 1,020 millionths.
    expect(checked.gateway).toMatchObject({ priced_requests: 4, cost: 0.00102, currency: 'USD', by_provider: { scripted: { cost: 0.00102 } } });
    const usage = (await callTool(owner.client, 'majordomus_usage')).structured as { providers: Record<string, { requests: number; prompt_tokens: number }> };
    expect(usage.providers.scripted).toMatchObject({ requests: 4, prompt_tokens: 520 });
  });

  it('asks the orchestrator mid-task: progress and a channel notice, waiting with options, then reply_task resumes with the answer', async () => {
    const api = await modelApi([
      { kind: 'tool_call', name: 'ask', input: { question: 'Name the helper foo or bar?', options: ['foo', 'bar'] } },
      { kind: 'text', text: 'Named it bar.' },
    ]);
    const repo = await checkout();
    await writeGatewayConfig(repo.root, { scripted: { api, models: ['cheap-1'] } });
    await scene.client(repo.root); // the owner
    const orchestrator = await scene.client(repo.root, { capabilities: { experimental: { 'claude/channel': {} } } });
    const notices: Array<{ method: string; params?: any }> = [];
    orchestrator.client.fallbackNotificationHandler = async (notification) => {
      notices.push(notification as { method: string; params?: any });
    };

    const progress: string[] = [];
    const answered = (await orchestrator.client.callTool({ name: 'run_task', arguments: { task: 'Add a helper; ask me for its name.', wait: true, timeout_seconds: 120 } }, undefined, {
      timeout: 150_000,
      onprogress: (p) => progress.push(String(p.message ?? '')),
    })) as { isError?: boolean; structuredContent?: TaskState };
    expect(answered.isError ?? false).toBe(false);
    const waiting = answered.structuredContent as TaskState;
    expect(waiting).toMatchObject({ status: 'waiting', question: 'Name the helper foo or bar?', options: ['foo', 'bar'] });
    expect(progress.some((line) => line.includes('Name the helper foo or bar?'))).toBe(true);

    const channel = await waitFor(() => notices.find((n) => n.method === 'notifications/claude/channel'), { what: 'a claude/channel notice', timeoutMs: 30_000 });
    expect(channel.params.content).toContain('Name the helper foo or bar?');
    expect(channel.params.meta).toEqual({ task_id: waiting.task_id, status: 'waiting' });

    // Waiting holds no process: the session's turn has ended.
    const checked = await task(orchestrator.client, 'check_task', { task_id: waiting.task_id });
    expect(checked).toMatchObject({ status: 'waiting', options: ['foo', 'bar'] });
    const sessions = (await callTool(orchestrator.client, 'majordomus_session_list')).structured as { sessions: Array<{ session: string; status: string }> };
    expect(sessions.sessions.find((s) => s.session === waiting.task_id)?.status).toBe('exited');

    const replied = await task(orchestrator.client, 'reply_task', { task_id: waiting.task_id, message: 'bar', wait: true, timeout_seconds: 120 });
    expect(replied).toMatchObject({ status: 'completed', result: 'Named it bar.' });
    const resumed = conversationOf(api.modelRequests[1]!);
    expect(resumed.find((m) => m.role === 'tool')?.text).toContain('bar');
    expect(resumed.some((m) => m.text.includes('ask me for its name'))).toBe(true);
    await waitFor(() => notices.find((n) => n.method === 'notifications/claude/channel' && n.params?.meta?.status === 'completed'), { what: 'the completed notice', timeoutMs: 30_000 });

    const again = await callTool(orchestrator.client, 'reply_task', { task_id: waiting.task_id, message: 'foo' });
    expect(again.isError).toBe(true);
    expect(again.text).toContain('is completed, not waiting');
  });

  it('fails over from a provider answering 429 to the next, and shows the failover in the task\'s events', async () => {
    const first = await modelApi([{ kind: 'error', status: 429, message: 'slow down', headers: { 'Retry-After': '1' } }], ['cheap-1']);
    const second = await modelApi([{ kind: 'text', text: 'served by the second provider' }], ['cheap-2']);
    const repo = await checkout();
    await writeGatewayConfig(repo.root, { first: { api: first, models: ['cheap-1'] }, second: { api: second, models: ['cheap-2'] } });
    const owner = await scene.client(repo.root);
    const state = await task(owner.client, 'run_task', { task: 'say hello', wait: true, timeout_seconds: 120 });
    expect(state).toMatchObject({ status: 'completed', result: 'served by the second provider' });
    const routes = eventsOf(await transcriptOf(repo.root, state.task_id), 'route');
    expect(routes).toHaveLength(1);
    expect(routes[0]).toMatchObject({ provider: 'second', model: 'cheap-2' });
    expect(routes[0].failovers[0]).toMatchObject({ provider: 'first', model: 'cheap-1' });
    expect(routes[0].failovers[0].reason).toContain('429');
  });

  it('keeps an explicit model strict: unknown, the task errs naming it and what is available, and no provider is asked', async () => {
    const api = await modelApi([]);
    const repo = await checkout();
    await writeGatewayConfig(repo.root, { scripted: { api, models: ['cheap-1'] } });
    const owner = await scene.client(repo.root);
    const state = await task(owner.client, 'run_task', { task: 'anything', model: 'gpt-nonexistent', wait: true, timeout_seconds: 120 });
    expect(state.status).toBe('error');
    expect(state.error).toContain('gpt-nonexistent');
    expect(state.error).toContain('cheap-1');
    expect(api.modelRequests).toHaveLength(0);
  });

  it('ends each turn in its own honest state: max_turns, loop, an unreachable model, cancelled', async () => {
    const reads: ReplyScript = (_request, index) => ({ kind: 'tool_call', name: 'read_file', input: { path: 'calc.mjs', offset: index + 1 } });
    const api = await modelApi(reads);
    const repo = await checkout({ 'calc.mjs': CALC });
    await writeGatewayConfig(repo.root, { scripted: { api, models: ['cheap-1'] } });
    const owner = await scene.client(repo.root);

    const capped = await task(owner.client, 'run_task', { task: 'read forever', max_turns: 3, wait: true, timeout_seconds: 120 });
    expect(capped.status).toBe('max_turns');
    expect(capped.error).toBeDefined();
    expect(api.modelRequests).toHaveLength(3);

    const looping = await modelApi(Array.from({ length: 6 }, () => ({ kind: 'tool_call' as const, name: 'glob', input: { pattern: '*.mjs' } })));
    await writeGatewayConfig(repo.root, { scripted: { api: looping, models: ['cheap-1'] } });
    const looped = await task(owner.client, 'run_task', { task: 'list files', wait: true, timeout_seconds: 120 });
    expect(looped.status, JSON.stringify(looped)).toBe('loop');
    expect(looping.modelRequests).toHaveLength(4);

    await writeGatewayConfig(repo.root, { dead: { baseUrl: `http://127.0.0.1:${await closedPort()}/v1`, models: ['cheap-1'] } });
    const unreachable = await task(owner.client, 'run_task', { task: 'anything', wait: true, timeout_seconds: 120 });
    expect(unreachable.status).toBe('error');
    expect(unreachable.error).toMatch(/dead|unreachable|refused|connect/i);

    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    scene.defer(() => release());
    const holding = await modelApi([{ kind: 'text', text: 'never seen', holdUntil: held }]);
    await writeGatewayConfig(repo.root, { scripted: { api: holding, models: ['cheap-1'] } });
    const started = await task(owner.client, 'run_task', { task: 'take your time' });
    expect(started.status).toBe('running');
    await holding.waitForModelRequests(1);
    const cancelled = await task<{ task_id: string; status: string; was_running: boolean }>(owner.client, 'cancel_task', { task_id: started.task_id });
    expect(cancelled).toEqual({ task_id: started.task_id, status: 'cancelled', was_running: true });
    expect((await task(owner.client, 'check_task', { task_id: started.task_id })).status).toBe('cancelled');
    expect(await task(owner.client, 'cancel_task', { task_id: started.task_id })).toMatchObject({ status: 'cancelled', was_running: false });
    // A finished task keeps its state.
    expect(await task(owner.client, 'cancel_task', { task_id: capped.task_id })).toMatchObject({ status: 'max_turns', was_running: false });
  });

  it('refuses a task without a nominated executor profile, and an unknown task id', async () => {
    const repo = await scene.repo();
    const owner = await scene.client(repo.root);
    const refused = await callTool(owner.client, 'run_task', { task: 'anything' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('no executor profile is nominated');
    const unknown = await callTool(owner.client, 'check_task', { task_id: 'no-such-task' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('no task no-such-task');
  });
});
