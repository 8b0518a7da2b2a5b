/**
 * `majordomus exec --json`, black-box: the built executable in a temporary checkout, talking to the
 * scripted OpenAI-compatible server (real HTTP, real SSE). Covers:
 * - a completed turn with a tool call: the events in order, the usage the server reported summed,
 *   the tool's result in the next request, the conversation saved 0600;
 * - resume after a completed turn: the second turn's request carries the first turn's messages;
 * - ask: `waiting` with the question and options; `--resume` with the answer on stdin sends it as
 *   the tool result of the ask call;
 * - the guards: max_turns, loop (the same call four times);
 * - model failures end `error` with the reason: a closed port, HTTP 500, a stream cut mid-way;
 * - SIGTERM during a held request: `cancelled`, exit 0, promptly;
 * - where it talks and keeps state: the lease's gateway when no --base-url is given (and an error
 *   naming the fix when no server runs), MAJORDOMUS_EXECUTOR_STATE, MAJORDOMUS_TASK_ID;
 * - an unknown resume id and a broken policy end `error` naming them;
 * - every bad option exits 2 naming it.
 */
import { stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli, type CliProcess, type CliResult } from '../helpers/cli.js';
import { createFixtureRepo, makeTempDir, type FixtureRepo } from '../helpers/fixture-repo.js';
import { conversationOf, startModelApi, type ModelApi, type ModelApiOptions } from '../helpers/model-api.js';
import { waitFor } from '../helpers/wait.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

type Event = Record<string, unknown> & { type: string };

async function repo(files: Record<string, string> = {}): Promise<FixtureRepo> {
  const fixture = await createFixtureRepo({ files: { 'a.txt': 'hello from a.txt\n', ...files } });
  cleanups.push(() => fixture.cleanup());
  return fixture;
}

async function modelApi(options: ModelApiOptions): Promise<ModelApi> {
  const api = await startModelApi(options);
  cleanups.push(() => api.stop());
  return api;
}

function exec(root: string, api: ModelApi | string, input: string, extra: string[] = [], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const base = typeof api === 'string' ? api : `${api.url}/v1`;
  return runCli(['exec', '--json', '--base-url', base, ...extra], { cwd: root, input, env: { MAJORDOMUS_EXECUTOR_STATE: undefined, MAJORDOMUS_TASK_ID: undefined, ...env } });
}

function events(result: CliResult): Event[] {
  return result.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Event);
}

function resultOf(result: CliResult): Event {
  const all = events(result).filter((event) => event.type === 'result');
  expect(all, result.stderr).toHaveLength(1);
  expect(events(result).at(-1)?.type).toBe('result');
  return all[0] as Event;
}

function sessionOf(result: CliResult): string {
  const first = events(result)[0];
  expect(first?.type, result.stdout + result.stderr).toBe('session');
  return String(first?.id);
}

function messagesOf(api: ModelApi, index: number): Record<string, unknown>[] {
  const body = api.modelRequests[index]?.body as { messages: Record<string, unknown>[] };
  return body.messages;
}

describe('exec: a turn', () => {
  it('completes a turn with a tool call: events in order, usage summed, the result sent back, the conversation saved 0600', async () => {
    const checkout = await repo();
    const api = await modelApi({
      replies: [
        { kind: 'tool_call', name: 'read_file', input: { path: 'a.txt' }, id: 'call_read', usage: { inputTokens: 120, outputTokens: 11 } },
        { kind: 'text', text: 'a.txt greets us.', usage: { inputTokens: 150, outputTokens: 6 } },
      ],
    });
    const run = await exec(checkout.root, api, 'What does a.txt say?');
    expect(run.code, run.stderr).toBe(0);
    const id = sessionOf(run);
    expect(events(run)).toEqual([
      { type: 'session', id },
      { type: 'message', role: 'user', text: 'What does a.txt say?' },
      { type: 'tool_call', id: 'call_read', name: 'read_file', input: { path: 'a.txt' } },
      { type: 'tool_result', id: 'call_read', name: 'read_file', ok: true, output: '     1\thello from a.txt' },
      { type: 'message', role: 'assistant', text: 'a.txt greets us.' },
      { type: 'result', status: 'completed', answer: 'a.txt greets us.', usage: { prompt_tokens: 270, completion_tokens: 17 }, requests: 2 },
    ]);
    expect(messagesOf(api, 1).slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_read', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_read', content: '     1\thello from a.txt' },
    ]);
    const file = join(checkout.root, '.ai/local/state/executor', `${id}.json`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('resumes a completed conversation: the next turn\'s request carries the first turn\'s messages', async () => {
    const checkout = await repo();
    const api = await modelApi({
      replies: [
        { kind: 'tool_call', name: 'read_file', input: { path: 'a.txt' } },
        { kind: 'text', text: 'first answer' },
        { kind: 'text', text: 'second answer' },
      ],
    });
    const first = await exec(checkout.root, api, 'first task');
    const id = sessionOf(first);
    const second = await exec(checkout.root, api, 'second task', ['--resume', id]);
    expect(sessionOf(second)).toBe(id);
    expect(resultOf(second)).toMatchObject({ status: 'completed', answer: 'second answer' });
    const request = api.modelRequests[2];
    expect(request && conversationOf(request).map((m) => [m.role, m.text])).toEqual([
      ['system', expect.stringContaining('coding agent')],
      ['user', 'first task'],
      ['assistant', 'tool_call read_file {"path":"a.txt"}'],
      ['tool', '     1\thello from a.txt'],
      ['assistant', 'first answer'],
      ['user', 'second task'],
    ]);
  });

  it('ends waiting on ask with the options, and a resume sends the answer as the ask call\'s result', async () => {
    const checkout = await repo();
    const api = await modelApi({
      replies: [
        { kind: 'tool_call', name: 'ask', input: { question: 'Which file?', options: ['a.txt', 'b.txt'] }, id: 'call_ask' },
        { kind: 'text', text: 'Using a.txt.' },
      ],
    });
    const first = await exec(checkout.root, api, 'Edit the file.');
    expect(resultOf(first)).toEqual({ type: 'result', status: 'waiting', question: 'Which file?', options: ['a.txt', 'b.txt'], usage: { prompt_tokens: 10, completion_tokens: 5 }, requests: 1 });
    expect(api.inFlight).toBe(0); // a waiting turn holds no model connection
    const second = await exec(checkout.root, api, 'a.txt', ['--resume', sessionOf(first)]);
    expect(resultOf(second)).toMatchObject({ status: 'completed', answer: 'Using a.txt.' });
    expect(messagesOf(api, 1).slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_ask', type: 'function', function: { name: 'ask', arguments: '{"question":"Which file?","options":["a.txt","b.txt"]}' } }] },
      { role: 'tool', tool_call_id: 'call_ask', content: 'a.txt' },
    ]);
  });
});

describe('exec: the guards', () => {
  it('ends max_turns after --max-turns model requests', async () => {
    const checkout = await repo();
    const api = await modelApi({
      replies: [1, 2, 3].map((n) => ({ kind: 'tool_call' as const, name: 'read_file', input: { path: 'a.txt', n } })),
    });
    const run = await exec(checkout.root, api, 'keep reading', ['--max-turns', '2']);
    expect(resultOf(run)).toMatchObject({ status: 'max_turns', error: 'stopped after 2 model requests (--max-turns 2) without a final answer', usage: { prompt_tokens: 20, completion_tokens: 10 } });
    expect(api.modelRequests).toHaveLength(2);
  });

  it('ends loop when the model makes the same call four times in a row', async () => {
    const checkout = await repo();
    const api = await modelApi({ replies: [1, 2, 3, 4].map(() => ({ kind: 'tool_call' as const, name: 'read_file', input: { path: 'a.txt' } })) });
    const run = await exec(checkout.root, api, 'read a.txt');
    expect(resultOf(run)).toMatchObject({ status: 'loop', error: 'the model called read_file with the same arguments 4 times in a row' });
    expect(events(run).filter((e) => e.type === 'tool_result').map((e) => e.ok)).toEqual([true, true, true, false]);
  });
});

describe('exec: model failures', () => {
  it('ends error naming a closed port', async () => {
    const checkout = await repo();
    const api = await startModelApi({});
    const url = api.url;
    await api.stop();
    const run = await exec(checkout.root, `${url}/v1`, 'anything');
    expect(run.code).toBe(0);
    expect(resultOf(run)).toMatchObject({ status: 'error', error: `the model endpoint ${url}/v1/chat/completions is unreachable (ECONNREFUSED)`, usage: { prompt_tokens: 0, completion_tokens: 0 } });
  });

  it('ends error with the server\'s message on HTTP 500', async () => {
    const checkout = await repo();
    const api = await modelApi({ replies: [{ kind: 'error', status: 500, message: 'upstream exploded' }] });
    const run = await exec(checkout.root, api, 'anything');
    expect(resultOf(run)).toMatchObject({ status: 'error', error: 'the model endpoint answered HTTP 500: upstream exploded' });
    expect(api.modelRequests).toHaveLength(1);
  });

  it('ends error when the stream is cut mid-way', async () => {
    const checkout = await repo();
    const api = await modelApi({ replies: [{ kind: 'broken', text: 'I was saying something when' }] });
    const run = await exec(checkout.root, api, 'anything');
    expect(resultOf(run)).toMatchObject({ status: 'error', error: expect.stringMatching(/^the model's stream (was cut|ended)/) });
  });
});

describe('exec: cancellation', () => {
  it('ends cancelled on SIGTERM during a held request, exits 0 promptly, and leaves the conversation resumable', async () => {
    const checkout = await repo();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(async () => release());
    const api = await modelApi({ replies: [{ kind: 'text', text: 'too late', holdUntil: held }, { kind: 'text', text: 'resumed' }] });
    const cli: CliProcess = spawnCli(['exec', '--json', '--base-url', `${api.url}/v1`], { cwd: checkout.root });
    cleanups.push(() => cli.stop());
    cli.child.stdin.end('a long task');
    await api.waitForModelRequests(1);
    const sent = Date.now();
    cli.child.kill('SIGTERM');
    const { code } = await cli.exited;
    expect(Date.now() - sent).toBeLessThan(10_000);
    expect(code).toBe(0);
    const lines = cli.lines().map((line) => JSON.parse(line) as Event);
    expect(lines.at(-1)).toMatchObject({ type: 'result', status: 'cancelled' });
    const id = String(lines[0]?.id);
    const resumed = await exec(checkout.root, api, 'go on', ['--resume', id]);
    expect(resultOf(resumed)).toMatchObject({ status: 'completed', answer: 'resumed' });
  });
});

describe('exec: where it talks and keeps state', () => {
  it('uses the gateway of the lease when no --base-url is given', async () => {
    const checkout = await repo();
    const api = await modelApi({ replies: [{ kind: 'text', text: 'via the lease' }] });
    const lease = { schema: 'majordomus-mcp-lease/v1', pid: process.pid, token: 'lease-token', root: checkout.root, url: api.url, started_at: new Date().toISOString(), version: '0.0.0' };
    await mkdir(join(checkout.root, '.ai/local/state/mcp'), { recursive: true });
    await writeFile(join(checkout.root, '.ai/local/state/mcp/server.json'), JSON.stringify(lease), { mode: 0o600 });
    const run = await runCli(['exec', '--json'], { cwd: checkout.root, input: 'hello' });
    expect(resultOf(run)).toMatchObject({ status: 'completed', answer: 'via the lease' });
    expect(api.modelRequests[0]?.path).toBe('/v1/chat/completions');
  });

  it('ends error naming the fix when no shared server runs and no --base-url is given', async () => {
    const checkout = await repo();
    const run = await runCli(['exec', '--json'], { cwd: checkout.root, input: 'hello' });
    expect(run.code).toBe(0);
    expect(events(run)).toEqual([
      { type: 'result', status: 'error', error: 'no shared server runs in this checkout; start `majordomus mcp` there, or pass --base-url', usage: { prompt_tokens: 0, completion_tokens: 0 }, requests: 0 },
    ]);
  });

  it('keeps the conversation in MAJORDOMUS_EXECUTOR_STATE and sends MAJORDOMUS_TASK_ID as X-Majordomus-Task', async () => {
    const checkout = await repo();
    const state = await makeTempDir('majordomus-exec-state-');
    cleanups.push(() => state.cleanup());
    const api = await modelApi({ replies: [{ kind: 'text', text: 'ok' }] });
    const run = await exec(checkout.root, api, 'hi', [], { MAJORDOMUS_EXECUTOR_STATE: join(state.path, 'session'), MAJORDOMUS_TASK_ID: 'task-42' });
    const id = sessionOf(run);
    expect((await stat(join(state.path, 'session', `${id}.json`))).isFile()).toBe(true);
    expect((await stat(join(state.path, 'session'))).mode & 0o777).toBe(0o700);
    expect(api.modelRequests[0]?.headers['x-majordomus-task']).toBe('task-42');
  });

  it('ends error naming an unknown resume id', async () => {
    const checkout = await repo();
    const api = await modelApi({});
    const id = '22222222-2222-4222-8222-222222222222';
    const run = await exec(checkout.root, api, 'hi', ['--resume', id]);
    expect(resultOf(run)).toMatchObject({ status: 'error', error: expect.stringMatching(new RegExp(`^cannot resume: no conversation ${id} in `)) });
    expect(api.modelRequests).toHaveLength(0);
  });

  it('ends error when the policy cannot be read, rather than run without its deny globs', async () => {
    const checkout = await repo({ '.ai/repo/policy.yaml': 'permissions: {deny: [unclosed\n' });
    const api = await modelApi({});
    const run = await exec(checkout.root, api, 'hi');
    expect(resultOf(run)).toMatchObject({ status: 'error', error: expect.stringContaining('policy.yaml is not valid YAML') });
    expect(api.modelRequests).toHaveLength(0);
  });
});

describe('exec: bad command lines', () => {
  const cases: [string, string[], string, string][] = [
    ['no --json', ['exec'], 'task', 'exec needs --json'],
    ['a bad --mode', ['exec', '--json', '--mode', 'yolo'], 'task', '--mode must be one of default, read-only, not "yolo"'],
    ['a zero --max-turns', ['exec', '--json', '--max-turns', '0'], 'task', '--max-turns must be an integer 1–100000, not "0"'],
    ['a small --context-tokens', ['exec', '--json', '--context-tokens', '12'], 'task', '--context-tokens must be an integer'],
    ['a --resume that is no id', ['exec', '--json', '--resume', '../x'], 'task', '--resume takes the id a session event printed (a UUID), not "../x"'],
    ['a --base-url that is not http', ['exec', '--json', '--base-url', 'ftp://x/v1'], 'task', '--base-url must be an http(s) URL'],
    ['--api-key-env without --base-url', ['exec', '--json', '--api-key-env', 'HOME'], 'task', '--api-key-env goes with --base-url'],
    ['--api-key-env naming an unset variable', ['exec', '--json', '--base-url', 'http://127.0.0.1:9/v1', '--api-key-env', 'MAJORDOMUS_TEST_UNSET_KEY'], 'task', '--api-key-env MAJORDOMUS_TEST_UNSET_KEY: that environment variable is not set'],
    ['an empty stdin', ['exec', '--json', '--base-url', 'http://127.0.0.1:9/v1'], '  \n', 'exec reads the task from stdin, and stdin was empty'],
    ['--repo', ['exec', '--json', '--repo', '.'], 'task', '--repo is not an option of exec'],
    ['an option of another command', ['exec', '--json', '--port', '1'], 'task', '--port is not an option of exec'],
    ['a positional argument', ['exec', '--json', 'do it'], 'task', 'exec takes no arguments'],
  ];
  it.each(cases)('exits 2 on %s, naming it', async (_name, args, input, message) => {
    const checkout = await repo();
    const run = await runCli(args, { cwd: checkout.root, input, env: { MAJORDOMUS_TEST_UNSET_KEY: undefined } });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(message);
  });
});

describe('exec: usage is what the server reported', () => {
  it('sums every request of the turn, the forced summary included', async () => {
    const checkout = await repo();
    const api = await modelApi({
      replies: [
        { kind: 'text', text: '', usage: { inputTokens: 50, outputTokens: 0 } },
        { kind: 'text', text: 'Nothing to do.', usage: { inputTokens: 60, outputTokens: 4 } },
      ],
    });
    const run = await exec(checkout.root, api, 'do nothing');
    expect(resultOf(run)).toEqual({ type: 'result', status: 'completed', answer: 'Nothing to do.', usage: { prompt_tokens: 110, completion_tokens: 4 }, requests: 2 });
    await waitFor(() => api.modelRequests.length === 2, { what: 'the summary request' });
    expect((api.modelRequests[1]?.body as { tool_choice: string }).tool_choice).toBe('none');
  });
});
