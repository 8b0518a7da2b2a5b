/**
 * The model gateway's routing, failover and caps — black-box, one `serve --port 0` for the file,
 * scripted OpenAI-compatible providers on loopback, the config rewritten per test with fresh
 * provider slugs (a provider's cooling outlives a test). Covers:
 * - forwarding: the provider's model name replaces the client's; a stream passes through byte for
 *   byte, `[DONE]` included, and asks the provider for usage; X-Majordomus-Route names the route;
 * - typed failover along the chain (omitted model): 429 with Retry-After (then the cooling
 *   provider is skipped), a stall before the first byte, a 5xx, a refused connection; a 4xx is
 *   the client's and is forwarded; a stream broken after its first byte is cut, never retried;
 * - Retry-After within the budget is waited out once; beyond it, 429 `rate_limited`;
 * - an explicit model never fails over: its 5xx is 502 `upstream_unavailable`;
 * - per-provider caps: never more than max_concurrent upstream; a full queue is 503 `busy` with
 *   Retry-After; a client that goes away frees its slot.
 */
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorReply, ScriptedReply } from '../helpers/model-api.js';
import { waitFor } from '../helpers/wait.js';
import { jsonOf, MESSAGES, RecordingProxy, routeOf, startGatewayScene, type GatewayScene } from './gateway-fixture.js';

let scene: GatewayScene;
let slugs = 0;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  scene = await startGatewayScene();
});
afterAll(async () => {
  await scene?.close();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await scene.stopProviders();
});

/** A fresh slug per provider: cooling and limiters are kept per slug across config reloads. */
function slug(): string {
  slugs += 1;
  return `p${slugs}`;
}

/** A promise the test settles, released at the end of the test whatever happens. */
function gate(): { promise: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  cleanups.push(() => open());
  return { promise, open };
}

function providerLine(name: string, url: string, models: string[], extra = ''): string {
  return `  ${name}: {base_url: ${url}/v1, models: [${models.join(', ')}]${extra === '' ? '' : `, ${extra}`}}`;
}

function config(providers: string[], chain: string[], routing = ''): string {
  return ['providers:', ...providers, 'routing:', `  priority_models: [${chain.map((model) => `{model: ${model}}`).join(', ')}]`, routing].join('\n') + '\n';
}

const TOO_MANY: ErrorReply = { kind: 'error', status: 429, message: 'slow down', headers: { 'Retry-After': '30' } };

describe('forwarding', () => {
  it('sends the provider its own model name and answers with its completion and the route', async () => {
    const api = await scene.modelApi({ replies: [{ kind: 'text', text: 'hello there', usage: { inputTokens: 7, outputTokens: 2 } }] });
    const one = slug();
    await scene.writeConfig(config([providerLine(one, api.url, ['m1'])], []));
    const response = await scene.chat({ model: `${one}/m1`, messages: MESSAGES, temperature: 0.2 });
    expect(response.status).toBe(200);
    expect(routeOf(response)).toEqual({ provider: one, model: 'm1', failovers: [] });
    const body = await jsonOf(response);
    expect(body.choices[0].message.content).toBe('hello there');
    expect(body.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2 });
    expect(api.modelRequests.map((request) => request.body)).toEqual([{ model: 'm1', messages: MESSAGES, temperature: 0.2 }]);
  });

  it('passes a stream through byte for byte, [DONE] included, asking the provider for usage', async () => {
    const api = await scene.modelApi({ replies: [{ kind: 'tool_call', name: 'read_file', input: { path: 'src/index.ts' } }] });
    const proxy = await RecordingProxy.start(api.url);
    cleanups.push(() => proxy.stop());
    const one = slug();
    await scene.writeConfig(config([providerLine(one, proxy.url, ['m1'], 'first_byte_timeout_seconds: 30')], ['m1'], '  retry_after_budget_seconds: 5'));
    const response = await scene.chat({ messages: MESSAGES, stream: true, stream_options: { include_usage: false } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(routeOf(response)).toEqual({ provider: one, model: 'm1', failovers: [] });
    const received = Buffer.from(await response.arrayBuffer());
    expect(proxy.responses).toHaveLength(1);
    expect(received.equals(proxy.responses[0] as Buffer)).toBe(true);
    expect(received.toString('utf8')).toMatch(/"usage":\{"prompt_tokens":10,"completion_tokens":5,.*\n\ndata: \[DONE\]\n\n$/s);
    expect(api.modelRequests[0]?.body).toEqual({ model: 'm1', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
  });

  it('keeps a long stream whole for a client that stops reading for a while', async () => {
    const text = Array.from({ length: 30_000 }, (_, i) => `word${i}`).join(' ');
    const api = await scene.modelApi({ replies: [{ kind: 'text', text }] });
    const proxy = await RecordingProxy.start(api.url);
    cleanups.push(() => proxy.stop());
    const one = slug();
    await scene.writeConfig(config([providerLine(one, proxy.url, ['m1'])], ['m1']));
    const received = await slowRead(scene.server.port, { messages: MESSAGES, stream: true }, scene.server.token);
    expect(proxy.responses).toHaveLength(1);
    expect(received.length).toBeGreaterThan(3_000_000);
    expect(received.equals(proxy.responses[0] as Buffer)).toBe(true);
  });

  it('forwards a 4xx other than 429 as it is, without failing over', async () => {
    const first = await scene.modelApi({ replies: [{ kind: 'error', status: 400, message: 'messages must not be empty' }] });
    const second = await scene.modelApi({ replies: [{ kind: 'text', text: 'never' }] });
    const [one, two] = [slug(), slug()];
    await scene.writeConfig(config([providerLine(one, first.url, ['m1']), providerLine(two, second.url, ['m2'])], ['m1', 'm2']));
    const response = await scene.chat({ messages: [] });
    expect(response.status).toBe(400);
    expect((await jsonOf(response)).error.message).toBe('messages must not be empty');
    expect(routeOf(response)).toEqual({ provider: one, model: 'm1', failovers: [] });
    expect(second.requests).toEqual([]);
  });
});

describe('typed failover along the chain', () => {
  it('moves on after a 429 with Retry-After, shows it in the route, and skips the cooling provider next time', async () => {
    const first = await scene.modelApi({ replies: [TOO_MANY] });
    const second = await scene.modelApi({ replies: [{ kind: 'text', text: 'from the second' }, { kind: 'text', text: 'again the second' }] });
    const [one, two] = [slug(), slug()];
    await scene.writeConfig(config([providerLine(one, first.url, ['m1']), providerLine(two, second.url, ['m2'])], ['m1', `${two}/m2`]));
    const response = await scene.chat({ messages: MESSAGES });
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).choices[0].message.content).toBe('from the second');
    expect(routeOf(response)).toEqual({ provider: two, model: 'm2', failovers: [{ provider: one, model: 'm1', reason: '429 Retry-After 30 s: slow down' }] });

    const next = await scene.chat({ messages: MESSAGES });
    expect(next.status).toBe(200);
    expect((await jsonOf(next)).choices[0].message.content).toBe('again the second');
    const route = routeOf(next);
    expect(route.provider).toBe(two);
    expect(route.failovers).toEqual([{ provider: one, model: 'm1', reason: expect.stringMatching(/^cooling down, Retry-After \d+ s left$/) }]);
    expect(first.modelRequests).toHaveLength(1);
    expect(scene.server.stderr()).toContain(`gateway: ${one}/m1: 429 Retry-After 30 s: slow down; trying ${two}/m2`);
  });

  it('waits out a Retry-After within the budget once when no entry is left', async () => {
    const api = await scene.modelApi({ replies: [{ ...TOO_MANY, headers: { 'Retry-After': '1' } }, { kind: 'text', text: 'after waiting' }] });
    const one = slug();
    await scene.writeConfig(config([providerLine(one, api.url, ['m1'])], ['m1'], '  retry_after_budget_seconds: 5'));
    const started = Date.now();
    const response = await scene.chat({ messages: MESSAGES });
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).choices[0].message.content).toBe('after waiting');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(routeOf(response)).toEqual({ provider: one, model: 'm1', failovers: [{ provider: one, model: 'm1', reason: '429 Retry-After 1 s: slow down' }] });
    expect(api.modelRequests).toHaveLength(2);
  });

  it('answers 429 rate_limited with Retry-After when the wait is beyond the budget', async () => {
    const api = await scene.modelApi({ replies: [TOO_MANY] });
    const one = slug();
    await scene.writeConfig(config([providerLine(one, api.url, ['m1'])], ['m1'], '  retry_after_budget_seconds: 5'));
    const response = await scene.chat({ messages: MESSAGES });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(25);
    const body = await jsonOf(response);
    expect(body.error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error' });
    expect(body.error.message).toContain(`${one}/m1 (429 Retry-After 30 s: slow down)`);
    expect(api.modelRequests).toHaveLength(1);
  });

  it('moves on when a provider sends no first byte in time', async () => {
    const stalled = gate();
    const first = await scene.modelApi({ replies: [{ kind: 'text', text: 'too late', holdUntil: stalled.promise }] });
    const second = await scene.modelApi({ replies: [{ kind: 'text', text: 'on time' }] });
    const [one, two] = [slug(), slug()];
    await scene.writeConfig(
      config([providerLine(one, first.url, ['m1'], 'first_byte_timeout_seconds: 1'), providerLine(two, second.url, ['m2'])], ['m1', 'm2']),
    );
    const response = await scene.chat({ messages: MESSAGES, stream: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"model":"m2"');
    expect(text).toContain('"content":"time"');
    expect(routeOf(response)).toEqual({ provider: two, model: 'm2', failovers: [{ provider: one, model: 'm1', reason: 'no first byte within 1 s' }] });
  });

  it('moves on after a 5xx and after a refused connection, and lists every attempt when all fail', async () => {
    const closedPort = await freePort();
    const failing = await scene.modelApi({ replies: [{ kind: 'error', status: 503, message: 'overloaded' }, { kind: 'error', status: 500, message: 'boom' }] });
    const healthy = await scene.modelApi({ replies: [{ kind: 'text', text: 'third time' }] });
    const [down, flaky, fine] = [slug(), slug(), slug()];
    const providers = [
      `  ${down}: {base_url: http://127.0.0.1:${closedPort}/v1, models: [d1]}`,
      providerLine(flaky, failing.url, ['f1']),
      providerLine(fine, healthy.url, ['h1']),
    ];
    await scene.writeConfig(config(providers, ['d1', 'f1', 'h1']));
    const response = await scene.chat({ messages: MESSAGES });
    expect(response.status).toBe(200);
    expect(routeOf(response).failovers).toEqual([
      { provider: down, model: 'd1', reason: 'connection refused' },
      { provider: flaky, model: 'f1', reason: '503: overloaded' },
    ]);

    await scene.writeConfig(config(providers.slice(0, 2), ['d1', 'f1']));
    const failed = await scene.chat({ messages: MESSAGES });
    expect(failed.status).toBe(502);
    const body = await jsonOf(failed);
    expect(body.error).toMatchObject({ code: 'upstream_unavailable', type: 'server_error' });
    expect(body.error.message).toBe(`no provider answered: ${down}/d1 (connection refused); ${flaky}/f1 (500: boom)`);
  });

  it('cuts a stream that breaks after its first byte, and never retries it elsewhere', async () => {
    const first = await scene.modelApi({ replies: [{ kind: 'broken', text: 'the beginning of an answer that never ends' }] });
    const second = await scene.modelApi({ replies: [{ kind: 'text', text: 'never' }] });
    const [one, two] = [slug(), slug()];
    await scene.writeConfig(config([providerLine(one, first.url, ['m1']), providerLine(two, second.url, ['m2'])], ['m1', 'm2']));
    const response = await scene.chat({ messages: MESSAGES, stream: true });
    expect(response.status).toBe(200);
    expect(routeOf(response)).toEqual({ provider: one, model: 'm1', failovers: [] });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    const cut = await (async () => {
      for (;;) {
        try {
          const { done, value } = await reader.read();
          if (done) return false;
          seen += Buffer.from(value).toString('utf8');
        } catch {
          return true;
        }
      }
    })();
    expect(seen).toContain('"content":"the "');
    expect(seen).not.toContain('[DONE]');
    expect(cut).toBe(true);
    expect(second.requests).toEqual([]);
  });

  it('never fails an explicit model over: its 5xx is 502 upstream_unavailable', async () => {
    const first = await scene.modelApi({ replies: [{ kind: 'error', status: 500, message: 'kaput' }] });
    const second = await scene.modelApi({ replies: [{ kind: 'text', text: 'never' }] });
    const [one, two] = [slug(), slug()];
    await scene.writeConfig(config([providerLine(one, first.url, ['m1']), providerLine(two, second.url, ['m2'])], ['m1', 'm2']));
    const response = await scene.chat({ model: 'm1', messages: MESSAGES });
    expect(response.status).toBe(502);
    expect((await jsonOf(response)).error).toMatchObject({ code: 'upstream_unavailable', message: `no provider answered: ${one}/m1 (500: kaput)` });
    expect(routeOf(response)).toEqual({ provider: one, model: 'm1', failovers: [{ provider: one, model: 'm1', reason: '500: kaput' }] });
    expect(second.requests).toEqual([]);
  });
});

describe('per-provider caps', () => {
  it('never has more than max_concurrent requests upstream, and serves every one of 50 concurrent requests', async () => {
    const api = await scene.modelApi({
      replies: (_request, index): ScriptedReply => ({ kind: 'text', text: `answer ${index}`, holdUntil: new Promise((resolve) => setTimeout(resolve, 20)) }),
    });
    const one = slug();
    await scene.writeConfig(config([providerLine(one, api.url, ['m1'], 'max_concurrent: 2, max_queue: 100')], ['m1']));
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => scene.chat({ messages: MESSAGES, stream: i % 2 === 0 })));
    expect(responses.map((response) => response.status)).toEqual(Array(50).fill(200));
    await Promise.all(responses.map((response) => response.text()));
    expect(api.modelRequests).toHaveLength(50);
    expect(api.maxInFlight).toBeLessThanOrEqual(2);
  });

  it('answers 503 busy with Retry-After once the queue is full, and serves the ones it queued', async () => {
    const held = gate();
    const api = await scene.modelApi({ replies: (): ScriptedReply => ({ kind: 'text', text: 'done', holdUntil: held.promise }) });
    const one = slug();
    await scene.writeConfig(config([providerLine(one, api.url, ['m1'], 'max_concurrent: 1, max_queue: 2')], ['m1']));
    const pending = Array.from({ length: 6 }, () => scene.chat({ model: 'm1', messages: MESSAGES }));
    const settled: Response[] = [];
    for (const request of pending) void request.then((response) => settled.push(response));
    await api.waitForModelRequests(1);
    // Three answered at once (refused), three wait: one upstream, two in the queue.
    await waitFor(() => settled.length >= 3, { what: 'three refusals' });
    expect(settled.map((response) => response.status)).toEqual([503, 503, 503]);
    for (const response of settled) {
      expect(response.headers.get('retry-after')).toBe('1');
      const body = await jsonOf(response);
      expect(body.error.code).toBe('busy');
      expect(body.error.message).toContain('queue full (1 running, 2 waiting)');
    }
    held.open();
    const all = await Promise.all(pending);
    expect(all.map((response) => response.status).sort()).toEqual([200, 200, 200, 503, 503, 503]);
    expect(api.modelRequests).toHaveLength(3);
    expect(api.maxInFlight).toBe(1);
  });

  it('frees the slot of a client that goes away before the first byte', async () => {
    const held = gate();
    const api = await scene.modelApi({
      replies: (_request, index): ScriptedReply => (index === 0 ? { kind: 'text', text: 'unheard', holdUntil: held.promise } : { kind: 'text', text: 'served' }),
    });
    const one = slug();
    await scene.writeConfig(config([providerLine(one, api.url, ['m1'], 'max_concurrent: 1, max_queue: 0')], ['m1']));
    const leaving = new AbortController();
    const abandoned = scene.chat({ messages: MESSAGES, stream: true }, {}, leaving.signal).catch(() => null);
    await api.waitForModelRequests(1);
    leaving.abort();
    await abandoned;
    // The slot comes back once the gateway has seen the client go: a later request is served.
    const response = await waitFor(
      async () => {
        const attempt = await scene.chat({ messages: MESSAGES });
        if (attempt.status === 200) return attempt;
        await attempt.text();
        return null;
      },
      { what: 'the slot to come back' },
    );
    expect((await jsonOf(response)).choices[0].message.content).toBe('served');
  });
});

/** POSTs a chat request over node:http and stops reading for a while after the first chunk. */
function slowRead(port: number, body: unknown, token: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } },
      (response) => {
        const chunks: Buffer[] = [];
        let paused = false;
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (paused) return;
          paused = true;
          response.pause();
          setTimeout(() => response.resume(), 500);
        });
        response.on('end', () => resolve(Buffer.concat(chunks)));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
