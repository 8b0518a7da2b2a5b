/**
 * The gateway's request flow in process, against scripted providers on loopback (the HTTP thread
 * only adds the uWS adapter, proven black-box): what it reports as usage and what the usage table
 * sums per provider and per task; how a stream waits for a slow client (backpressure) and still
 * forwards every byte, its idle limit paused meanwhile; how a stream whose provider goes silent
 * ends with an `upstream_idle` event, after an event cut anywhere, freeing the slot and reporting
 * the failure; how a stream for an Anthropic client is translated at the client's pace and ends,
 * when its provider goes silent, with Anthropic's `error` event.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayConfigFile } from '../../../src/gateway/config.js';
import { Gateway } from '../../../src/gateway/gateway.js';
import { idleMessage } from '../../../src/gateway/relay.js';
import type { UsageRecord } from '../../../src/gateway/usage.js';
import { UsageTable } from '../../../src/tasks/usage.js';
import { isStreamed, type ReplySink, type RouteReply } from '../../../src/platform/http-exchange.js';
import type { HttpRequest } from '../../../src/platform/http-exchange.js';
import { startModelApi, type ModelApi } from '../../helpers/model-api.js';
import { waitFor } from '../../helpers/wait.js';

const TOKEN = 'unit-token';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gatewayFor(yaml: string, report: (record: UsageRecord) => void): Promise<Gateway> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-unit-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'executor.yaml'), yaml);
  const gateway = new Gateway({ config: new GatewayConfigFile(join(dir, 'executor.yaml'), 'executor.yaml', {}), token: TOKEN, report });
  cleanups.push(() => gateway.close());
  return gateway;
}

async function modelApi(...args: Parameters<typeof startModelApi>): Promise<ModelApi> {
  const api = await startModelApi(...args);
  cleanups.push(() => api.stop());
  return api;
}

function chatRequest(body: unknown, task = '', path = '/v1/chat/completions'): HttpRequest {
  return {
    method: 'POST',
    path,
    query: '',
    host: '127.0.0.1',
    origin: '',
    authorization: `Bearer ${TOKEN}`,
    apiKey: '',
    contentType: 'application/json',
    accept: '',
    sessionId: '',
    peerHint: '',
    spawnDepth: '',
    clientPids: '',
    lastEventId: '',
    task,
    body: Buffer.from(JSON.stringify(body)),
    signal: new AbortController().signal,
  };
}

interface RecordingSink extends ReplySink {
  readonly pieces: Buffer[];
  readonly ended: Promise<'end' | 'cut'>;
  /** What `write` answers next (false: the client is not keeping up). */
  accept: boolean;
  /** The listener given to `onWritable`, until called. */
  writable: (() => void) | null;
}

function recordingSink(): RecordingSink {
  let done: (how: 'end' | 'cut') => void = () => undefined;
  const sink: RecordingSink = {
    pieces: [],
    ended: new Promise((resolve) => (done = resolve)),
    accept: true,
    writable: null,
    write(piece) {
      sink.pieces.push(Buffer.from(piece));
      return sink.accept;
    },
    end: (last) => {
      if (last !== undefined) sink.pieces.push(Buffer.from(last));
      done('end');
    },
    cut: () => done('cut'),
    onWritable(listener) {
      sink.writable = listener;
    },
    signal: new AbortController().signal,
  };
  return sink;
}

/** Runs a reply to its end: a whole body as it is, a stream through a recording sink. */
async function drain(reply: RouteReply): Promise<string> {
  if (!isStreamed(reply)) return Buffer.from(reply.body).toString('utf8');
  const sink = recordingSink();
  reply.start(sink);
  expect(await sink.ended).toBe('end');
  return Buffer.concat(sink.pieces).toString('utf8');
}

describe('usage', () => {
  it('reports each forwarded request with its tokens and failovers, summed per provider and per task', async () => {
    const limited = await modelApi({ replies: [{ kind: 'error', status: 429, message: 'wait', headers: { 'Retry-After': '60' } }] });
    const healthy = await modelApi({
      replies: [
        { kind: 'text', text: 'whole', usage: { inputTokens: 7, outputTokens: 3 } },
        { kind: 'text', text: 'streamed', usage: { inputTokens: 11, outputTokens: 4 } },
        { kind: 'text', text: 'untasked', usage: { inputTokens: 1, outputTokens: 1 } },
      ],
    });
    const table = new UsageTable();
    const records: UsageRecord[] = [];
    const gateway = await gatewayFor(
      `providers:\n  a: {base_url: ${limited.url}/v1, models: [ma]}\n  b: {base_url: ${healthy.url}/v1, models: [mb]}\nrouting: {priority_models: [{model: ma}, {model: mb}]}\n`,
      (record) => {
        records.push(record);
        table.record(record);
      },
    );
    expect(await drain(await gateway.handle(chatRequest({ messages: [] }, 'task-1')))).toContain('"content":"whole"');
    expect(await drain(await gateway.handle(chatRequest({ messages: [], stream: true }, 'task-1')))).toMatch(/data: \[DONE\]\n\n$/);
    await drain(await gateway.handle(chatRequest({ model: 'b/mb', messages: [] })));
    await waitFor(() => records.length === 3, { what: 'three usage records' });
    expect(records).toEqual([
      { task: 'task-1', key: 'lease', provider: 'b', model: 'mb', prompt_tokens: 7, completion_tokens: 3, failovers: 1, ok: true, charge: null },
      { task: 'task-1', key: 'lease', provider: 'b', model: 'mb', prompt_tokens: 11, completion_tokens: 4, failovers: 1, ok: true, charge: null },
      { task: null, key: 'lease', provider: 'b', model: 'mb', prompt_tokens: 1, completion_tokens: 1, failovers: 0, ok: true, charge: null },
    ]);
    expect(table.snapshot()).toMatchObject({
      providers: { b: { requests: 3, failed: 0, prompt_tokens: 19, completion_tokens: 8, failovers: 2 } },
      tasks: { 'task-1': { requests: 2, failed: 0, prompt_tokens: 18, completion_tokens: 7, failovers: 2, by_provider: { b: { requests: 2 } } } },
    });
    expect(limited.modelRequests).toHaveLength(1);
  });

  it('reports a request no provider answered as not ok, on the provider tried last', async () => {
    const failing = await modelApi({ replies: [{ kind: 'error', status: 500, message: 'down' }] });
    const records: UsageRecord[] = [];
    const gateway = await gatewayFor(`providers:\n  a: {base_url: ${failing.url}/v1, models: [ma]}\n`, (record) => records.push(record));
    const reply = await gateway.handle(chatRequest({ model: 'ma', messages: [] }, 'task-2'));
    expect(reply.status).toBe(502);
    expect(records).toEqual([{ task: 'task-2', key: 'lease', provider: 'a', model: 'ma', prompt_tokens: 0, completion_tokens: 0, failovers: 1, ok: false, charge: null }]);
  });
});

describe('streams and slow clients', () => {
  let upstream: Server | null = null;
  afterEach(async () => {
    const server = upstream;
    upstream = null;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });

  /**
   * A provider on loopback writing `pieces` of a stream, `gapMs` apart, then ending its answer —
   * or, with `stall`, its first answer stalls there; `closed` settles when that one's connection closes.
   */
  async function streamingProvider(pieces: string[], gapMs: number, after: 'end' | 'stall' = 'end'): Promise<{ url: string; closed: Promise<void> }> {
    let closed: () => void = () => undefined;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    let answered = 0;
    upstream = createServer((request, response) => {
      const first = answered++ === 0;
      request.resume();
      if (first) response.once('close', () => closed());
      request.on('end', async () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of pieces) {
          response.write(piece);
          await new Promise((resolve) => setTimeout(resolve, gapMs));
        }
        if (after === 'end' || !first) response.end();
      });
    });
    await new Promise<void>((resolve) => upstream?.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, closed: gone };
  }

  it('stops reading the provider while the client is behind, then forwards every byte', async () => {
    const pieces = ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: {"n":3}\n\n', 'data: [DONE]\n\n'];
    upstream = createServer((request, response) => {
      request.resume();
      request.on('end', async () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of pieces) {
          response.write(piece);
          await new Promise((resolve) => setTimeout(resolve, 15));
        }
        response.end();
      });
    });
    await new Promise<void>((resolve) => upstream?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const gateway = await gatewayFor(`providers:\n  a: {base_url: ${url}/v1, models: [ma]}\n`, () => undefined);
    const reply = await gateway.handle(chatRequest({ model: 'ma', messages: [], stream: true }));
    if (!isStreamed(reply)) throw new Error(`expected a stream, got ${reply.status}`);
    const sink = recordingSink();
    sink.accept = false;
    reply.start(sink);
    // Behind after the first piece: nothing more is written until the client catches up.
    expect(sink.pieces).toHaveLength(1);
    expect(sink.writable).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(sink.pieces).toHaveLength(1);
    sink.accept = true;
    sink.writable?.();
    expect(await sink.ended).toBe('end');
    expect(Buffer.concat(sink.pieces).toString('utf8')).toBe(pieces.join(''));
  });

  it('ends a stream whose provider goes silent with an upstream_idle event after the cut event, aborts it, frees the slot and reports the failure', async () => {
    const provider = await streamingProvider(['data: {"n":1}\n\n', 'data: {"n":'], 10, 'stall');
    const records: UsageRecord[] = [];
    const gateway = await gatewayFor(
      `providers:\n  a: {base_url: ${provider.url}/v1, models: [ma], idle_timeout_seconds: 0.2, max_concurrent: 1, max_queue: 0}\n`,
      (record) => records.push(record),
    );
    const reply = await gateway.handle(chatRequest({ model: 'ma', messages: [], stream: true }, 'task-idle'));
    if (!isStreamed(reply)) throw new Error(`expected a stream, got ${reply.status}`);
    const sink = recordingSink();
    const started = Date.now();
    reply.start(sink);
    expect(await sink.ended).toBe('end');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    const text = Buffer.concat(sink.pieces).toString('utf8');
    const event = `data: ${JSON.stringify({ error: { code: 'upstream_idle', message: idleMessage({ provider: 'a', model: 'ma', reasoningEffort: null }, 200), type: 'server_error' } })}\n\n`;
    // The provider's half event is closed first, so the error is read as an event of its own.
    expect(text).toBe(`data: {"n":1}\n\ndata: {"n":\n\n${event}`);
    expect(idleMessage({ provider: 'a', model: 'ma', reasoningEffort: null }, 200)).toContain('a/ma sent nothing for 0.2 s');
    await provider.closed; // the upstream request was aborted
    expect(records).toEqual([{ task: 'task-idle', key: 'lease', provider: 'a', model: 'ma', prompt_tokens: 0, completion_tokens: 0, failovers: 0, ok: false, charge: null }]);
    // The one slot is free again: with no queue, a held slot would be refused as busy.
    const next = await gateway.handle(chatRequest({ model: 'ma', messages: [], stream: true }));
    expect(next.status).toBe(200);
    await drain(next);
  });

  it('does not count the time the client is behind as the provider\'s silence', async () => {
    const pieces = ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: [DONE]\n\n'];
    const provider = await streamingProvider(pieces, 20);
    const gateway = await gatewayFor(`providers:\n  a: {base_url: ${provider.url}/v1, models: [ma], idle_timeout_seconds: 0.1}\n`, () => undefined);
    const reply = await gateway.handle(chatRequest({ model: 'ma', messages: [], stream: true }));
    if (!isStreamed(reply)) throw new Error(`expected a stream, got ${reply.status}`);
    const sink = recordingSink();
    sink.accept = false;
    reply.start(sink);
    await new Promise((resolve) => setTimeout(resolve, 400)); // four idle periods behind
    sink.accept = true;
    sink.writable?.();
    expect(await sink.ended).toBe('end');
    expect(Buffer.concat(sink.pieces).toString('utf8')).toBe(pieces.join(''));
  });

  it('translates a stream for an Anthropic client at the client\'s pace, and ends one whose provider goes silent with an Anthropic error event', async () => {
    const chunk = (delta: object): string => `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    const provider = await streamingProvider([chunk({ content: 'one ' }), chunk({ content: 'two' })], 10, 'stall');
    const gateway = await gatewayFor(`providers:\n  a: {base_url: ${provider.url}/v1, models: [ma], idle_timeout_seconds: 0.2}\n`, () => undefined);
    const reply = await gateway.handle(chatRequest({ model: 'ma', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true }, '', '/v1/messages'));
    if (!isStreamed(reply)) throw new Error(`expected a stream, got ${reply.status}`);
    expect(reply.contentType).toMatch(/^text\/event-stream/);
    const sink = recordingSink();
    sink.accept = false;
    reply.start(sink);
    // Behind after the first translated piece: nothing more until the client catches up.
    expect(sink.pieces).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(sink.pieces).toHaveLength(1);
    sink.accept = true;
    sink.writable?.();
    expect(await sink.ended).toBe('end');
    const text = Buffer.concat(sink.pieces).toString('utf8');
    expect(text.match(/^event: .*$/gm)).toEqual([
      'event: message_start',
      'event: content_block_start',
      'event: content_block_delta',
      'event: content_block_delta',
      'event: error',
    ]);
    expect(text).toContain(`"error":{"type":"api_error","message":${JSON.stringify(idleMessage({ provider: 'a', model: 'ma', reasoningEffort: null }, 200))},"code":"upstream_idle"}`);
  });
});
