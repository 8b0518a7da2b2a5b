/**
 * One turn of the loop, with a scripted chat function and small tools (the black-box tests run the
 * real command against a real server). Covers:
 * - a completed turn: events in order, usage summed exactly as reported, the conversation saved
 *   valid; a route event only when the gateway failed over;
 * - the guards: max_turns, the same call four times (the fourth not run), the same text five times;
 * - an empty answer: one forced summary request (tools declared, tool_choice none); empty again → error;
 * - ask: waiting with the question and options, the calls after it not run; the next turn's answer
 *   becomes the ask call's tool result and the conversation stays valid;
 * - model errors end `error` with the reason; a refused connection is retried once, nothing else;
 * - cancellation during a tool and during a request: `cancelled`, conversation valid;
 * - tool results capped; an unknown tool and arguments that are not JSON are results, not crashes;
 * - compaction when the context fills: a compaction event and every request still valid.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChatError, type ChatReply, type ChatRequest } from '../../../src/executor/chat.js';
import { conversationProblem } from '../../../src/executor/compaction.js';
import { ConversationStore, type Conversation } from '../../../src/executor/conversation.js';
import type { ExecutorEvent, ResultEvent } from '../../../src/executor/events.js';
import { FORCED_SUMMARY_PROMPT, runTurn, TOOL_RESULT_CAP, type TurnOptions } from '../../../src/executor/loop.js';
import type { ExecutorTool } from '../../../src/executor/tool.js';
import { makeTempDir } from '../../helpers/fixture-repo.js';

const temps: { cleanup(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((t) => t.cleanup()));
});

type Step = Partial<ChatReply> | ChatError | ((request: ChatRequest, signal?: AbortSignal) => Promise<Partial<ChatReply>>);

function call(name: string, args: unknown, id = `call_${name}_${Math.random().toString(36).slice(2, 8)}`): ChatReply['toolCalls'][number] {
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}

const echo: ExecutorTool = {
  name: 'echo',
  description: 'echo',
  parameters: { type: 'object' },
  run: async (input) => ({ ok: true, output: JSON.stringify(input) }),
};
const ask: ExecutorTool = {
  name: 'ask',
  description: 'ask',
  parameters: { type: 'object' },
  run: async (input) => {
    const { question, options } = input as { question: string; options?: string[] };
    return { ok: true, output: 'waiting', ask: { question, options: options ?? [] } };
  },
};

interface Harness {
  events: ExecutorEvent[];
  requests: ChatRequest[];
  result: ResultEvent;
  conversation: Conversation;
  store: ConversationStore;
}

async function turn(script: Step[], overrides: Partial<TurnOptions> & { conversation?: Conversation; store?: ConversationStore } = {}): Promise<Harness> {
  let store = overrides.store;
  if (store === undefined) {
    const dir = await makeTempDir('majordomus-loop-');
    temps.push(dir);
    store = new ConversationStore(dir.path);
  }
  const conversation = overrides.conversation ?? store.create('system prompt');
  const events: ExecutorEvent[] = [];
  const requests: ChatRequest[] = [];
  const steps = [...script];
  const result = await runTurn({
    conversation,
    store,
    input: 'the task',
    tools: [echo, ask],
    endpoint: { baseUrl: 'http://unused/v1', apiKey: null, taskId: null },
    model: null,
    maxTurns: 200,
    contextTokens: 32_000,
    root: '/r',
    cwd: '/r',
    signal: new AbortController().signal,
    emit: (event) => events.push(event),
    retryDelayMs: 10,
    chat: async (_endpoint, request, signal) => {
      requests.push({ ...request, messages: structuredClone([...request.messages]) });
      // A request without tools is compaction's summary request: answered apart from the script.
      if (request.tools.length === 0) return { content: 'SUMMARY', toolCalls: [], usage: null, route: null, finishReason: 'stop' };
      const step = steps.shift();
      if (step === undefined) throw new Error(`no scripted reply for request ${requests.length}`);
      if (step instanceof ChatError) throw step;
      const reply = typeof step === 'function' ? await step(request, signal) : step;
      return { content: '', toolCalls: [], usage: null, route: null, finishReason: 'stop', ...reply };
    },
    ...overrides,
  });
  return { events, requests, result, conversation, store };
}

const usage = (prompt: number, completion: number): ChatReply['usage'] => ({ prompt_tokens: prompt, completion_tokens: completion });

describe('a completed turn', () => {
  it('prints the events in order, sums the reported usage, and saves a valid conversation', async () => {
    const read = call('echo', { path: 'a.txt' }, 'c1');
    const h = await turn([
      { content: 'Reading.', toolCalls: [read], usage: usage(100, 7) },
      { content: 'Done: a.txt says hi.', usage: usage(130, 9) },
    ]);
    expect(h.events).toEqual([
      { type: 'message', role: 'user', text: 'the task' },
      { type: 'message', role: 'assistant', text: 'Reading.' },
      { type: 'tool_call', id: 'c1', name: 'echo', input: { path: 'a.txt' } },
      { type: 'tool_result', id: 'c1', name: 'echo', ok: true, output: '{"path":"a.txt"}' },
      { type: 'message', role: 'assistant', text: 'Done: a.txt says hi.' },
      { type: 'result', status: 'completed', answer: 'Done: a.txt says hi.', usage: { prompt_tokens: 230, completion_tokens: 16 }, requests: 2 },
    ]);
    expect(h.requests[1]?.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: '{"path":"a.txt"}' });
    const saved = await h.store.load(h.conversation.id);
    expect(saved.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(conversationProblem(saved.messages)).toBeNull();
  });

  it('counts only what the server reported: no usage reported, zero', async () => {
    const h = await turn([{ content: 'ok' }]);
    expect(h.result.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0 });
  });

  it('prints a route event when the gateway failed over, and none when it did not', async () => {
    const failovers = [{ provider: 'cloud', model: 'big', reason: 'HTTP 503' }];
    const h = await turn([
      { toolCalls: [call('echo', {})], route: { provider: 'local', model: 'small', failovers: [] } },
      { content: 'ok', route: { provider: 'local', model: 'small', failovers } },
    ]);
    expect(h.events.filter((e) => e.type === 'route')).toEqual([{ type: 'route', provider: 'local', model: 'small', failovers }]);
  });
});

describe('the guards', () => {
  it('ends max_turns after --max-turns requests without a final answer', async () => {
    const h = await turn([{ toolCalls: [call('echo', { n: 1 })] }, { toolCalls: [call('echo', { n: 2 })] }], { maxTurns: 2 });
    expect(h.requests).toHaveLength(2);
    expect(h.result).toMatchObject({ status: 'max_turns', error: 'stopped after 2 model requests (--max-turns 2) without a final answer' });
    expect(conversationProblem((await h.store.load(h.conversation.id)).messages)).toBeNull();
  });

  it('ends loop at the fourth identical call, without running it', async () => {
    let runs = 0;
    const counting: ExecutorTool = { ...echo, run: async () => ((runs += 1), { ok: true, output: 'same' }) };
    const same = (): Step => ({ toolCalls: [call('echo', { path: 'x' })] });
    const h = await turn([same(), same(), same(), same()], { tools: [counting] });
    expect(runs).toBe(3);
    expect(h.result).toMatchObject({ status: 'loop', error: 'the model called echo with the same arguments 4 times in a row' });
    const last = h.events.filter((e) => e.type === 'tool_result').at(-1);
    expect(last).toMatchObject({ ok: false, output: '[not run: the turn ended (loop)]' });
    expect(conversationProblem((await h.store.load(h.conversation.id)).messages)).toBeNull();
  });

  it('ends loop at the fifth identical text', async () => {
    const steps: Step[] = [1, 2, 3, 4, 5].map((n) => ({ content: 'Let me look again.', toolCalls: [call('echo', { n })] }));
    const h = await turn(steps);
    expect(h.requests).toHaveLength(5);
    expect(h.result).toMatchObject({ status: 'loop', error: 'the model wrote the same text 5 times in a row' });
  });
});

describe('an empty answer', () => {
  it('asks once for a summary, with the tools declared but tool_choice none', async () => {
    const h = await turn([{ content: '  ', usage: usage(10, 0) }, { content: 'I changed nothing.', usage: usage(12, 4) }]);
    expect(h.requests[1]?.toolChoice).toBe('none');
    expect(h.requests[1]?.tools.length).toBe(2);
    expect(h.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: FORCED_SUMMARY_PROMPT });
    expect(h.result).toEqual({ type: 'result', status: 'completed', answer: 'I changed nothing.', usage: { prompt_tokens: 22, completion_tokens: 4 }, requests: 2 });
    expect(h.conversation.messages.slice(-2)).toEqual([
      { role: 'user', content: FORCED_SUMMARY_PROMPT },
      { role: 'assistant', content: 'I changed nothing.' },
    ]);
  });

  it('ends error when the summary is empty too, leaving the conversation valid', async () => {
    const h = await turn([{ content: '' }, { content: '' }]);
    expect(h.requests).toHaveLength(2);
    expect(h.result).toMatchObject({ status: 'error', error: 'the model answered with neither text nor a tool call, twice (the second time asked for a summary)' });
    expect(h.conversation.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });
});

describe('ask', () => {
  it('ends waiting with the question and options, then takes the answer as the ask call\'s result', async () => {
    const question = call('ask', { question: 'Which branch?', options: ['main', 'dev'] }, 'ask1');
    const after = call('echo', { n: 1 }, 'e1');
    const first = await turn([{ toolCalls: [question, after] }]);
    expect(first.result).toEqual({ type: 'result', status: 'waiting', question: 'Which branch?', options: ['main', 'dev'], usage: { prompt_tokens: 0, completion_tokens: 0 }, requests: 1 });
    expect(first.events.find((e) => e.type === 'tool_result' && e.id === 'e1')).toMatchObject({ ok: false, output: '[not run: the turn ended (waiting)]' });
    const saved = await first.store.load(first.conversation.id);
    expect(saved.pendingAsk).toEqual({ callId: 'ask1', question: 'Which branch?', options: ['main', 'dev'] });

    const second = await turn([{ content: 'Merged into dev.' }], { conversation: saved, store: first.store, input: 'dev' });
    const sent = second.requests[0]?.messages ?? [];
    expect(sent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'ask1', content: 'dev' });
    expect(conversationProblem(sent)).toBeNull();
    expect(second.result).toMatchObject({ status: 'completed', answer: 'Merged into dev.' });
    expect((await first.store.load(first.conversation.id)).pendingAsk).toBeNull();
  });
});

describe('model errors', () => {
  it('ends error with the reason, without retrying an HTTP error', async () => {
    const h = await turn([new ChatError('http', 'the model endpoint answered HTTP 500: boom', { status: 500 })]);
    expect(h.requests).toHaveLength(1);
    expect(h.result).toMatchObject({ status: 'error', error: 'the model endpoint answered HTTP 500: boom' });
  });

  it('retries a refused connection once', async () => {
    const refused = (): ChatError => new ChatError('unreachable', 'the model endpoint X is unreachable (ECONNREFUSED)', { code: 'ECONNREFUSED' });
    const recovered = await turn([refused(), { content: 'fine' }]);
    expect(recovered.requests).toHaveLength(2);
    expect(recovered.result.status).toBe('completed');
    const twice = await turn([refused(), refused()]);
    expect(twice.requests).toHaveLength(2);
    expect(twice.result).toMatchObject({ status: 'error', error: 'the model endpoint X is unreachable (ECONNREFUSED)' });
    const dns = await turn([new ChatError('unreachable', 'the model endpoint Y is unreachable (ENOTFOUND)', { code: 'ENOTFOUND' })]);
    expect(dns.requests).toHaveLength(1);
  });

  it('prints the route of a failed request when the gateway failed over first', async () => {
    const route = { provider: 'b', model: 'm2', failovers: [{ provider: 'a', model: 'm1', reason: 'ECONNREFUSED' }] };
    const h = await turn([new ChatError('http', 'the model endpoint answered HTTP 503: all down', { status: 503, route })]);
    expect(h.events.map((e) => e.type)).toEqual(['message', 'route', 'result']);
  });
});

describe('cancellation', () => {
  it('aborts a running tool, marks the calls after it not run, and keeps the conversation valid', async () => {
    const controller = new AbortController();
    const slow: ExecutorTool = {
      ...echo,
      name: 'slow',
      run: (_input, context) =>
        new Promise((resolve) => {
          context.signal.addEventListener('abort', () => resolve({ ok: false, output: 'aborted' }));
          controller.abort();
        }),
    };
    const h = await turn([{ toolCalls: [call('slow', {}, 's1'), call('echo', {}, 'e1')] }], { tools: [slow, echo], signal: controller.signal });
    expect(h.result).toMatchObject({ status: 'cancelled' });
    expect(h.events.filter((e) => e.type === 'tool_result').map((e) => (e as { output: string }).output)).toEqual(['aborted', '[not run: the turn was cancelled]']);
    expect(conversationProblem((await h.store.load(h.conversation.id)).messages)).toBeNull();
  });

  it('ends cancelled when the signal aborts a request', async () => {
    const controller = new AbortController();
    const h = await turn(
      [
        async (_request, signal) => {
          controller.abort();
          if (signal?.aborted) throw new ChatError('aborted', 'the model request was cancelled');
          return { content: 'unreachable' };
        },
      ],
      { signal: controller.signal },
    );
    expect(h.result).toMatchObject({ status: 'cancelled', error: 'the turn was cancelled' });
    expect(h.events.filter((e) => e.type === 'result')).toHaveLength(1);
  });
});

describe('tool results', () => {
  it('caps what the model reads of a long result, head and tail kept', async () => {
    const long: ExecutorTool = { ...echo, run: async () => ({ ok: true, output: `HEAD${'x'.repeat(100_000)}TAIL` }) };
    const h = await turn([{ toolCalls: [call('echo', {})] }, { content: 'ok' }], { tools: [long] });
    const sent = h.requests[1]?.messages.at(-1)?.content ?? '';
    expect(sent.length).toBeLessThan(TOOL_RESULT_CAP + 100);
    expect(sent.startsWith('HEAD')).toBe(true);
    expect(sent.endsWith('TAIL')).toBe(true);
  });

  it('answers an unknown tool and arguments that are not JSON with a failed result', async () => {
    const h = await turn([{ toolCalls: [call('nope', {}, 'n1'), call('echo', '{"path": ', 'b1')] }, { content: 'ok' }]);
    const results = h.events.filter((e) => e.type === 'tool_result');
    expect(results[0]).toMatchObject({ ok: false, output: 'there is no tool named "nope"; the tools are: echo, ask' });
    expect(results[1]).toMatchObject({ ok: false, output: expect.stringMatching(/^the arguments of echo are not valid JSON \(/) });
    expect(h.events.find((e) => e.type === 'tool_call' && e.id === 'b1')).toMatchObject({ input: '{"path": ' });
    expect(h.result.status).toBe('completed');
  });
});

describe('compaction in the loop', () => {
  it('compacts when the context fills and every request stays valid', async () => {
    const big: ExecutorTool = { ...echo, run: async (input) => ({ ok: true, output: `${JSON.stringify(input)}${'z'.repeat(1_500)}` }) };
    const steps: Step[] = [];
    for (let n = 0; n < 12; n++) steps.push({ content: `step ${n}`, toolCalls: [call('echo', { n })] });
    steps.push({ content: 'done' });
    const h = await turn(steps, { tools: [big], contextTokens: 3_000 });
    expect(h.result.status).toBe('completed');
    const compactions = h.events.filter((e) => e.type === 'compaction');
    expect(compactions.length).toBeGreaterThan(0);
    for (const request of h.requests) expect(conversationProblem(request.messages)).toBeNull();
    expect(h.requests.some((r) => r.tools.length === 0)).toBe(true); // snipping alone was not enough
    const snippedSent = h.requests.some((r) => r.messages.some((m) => m.role === 'tool' && m.content.startsWith('[tool result snipped:')));
    expect(snippedSent).toBe(true); // snipping came first
    expect(h.conversation.messages.some((m) => m.role === 'user' && m.content.includes('SUMMARY'))).toBe(true);
  });
});
