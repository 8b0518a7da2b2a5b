/**
 * The bridge's wire (src/shared/bridge.ts) against a scripted node:http `/mcp` on port 0. Covers:
 * - once initialize succeeded (a 200 issuing Mcp-Session-Id) the bridge opens `GET /mcp` with the
 *   token, the session id and Accept: text/event-stream, and relays each frame of that stream as
 *   it arrives, byte for byte; no stream is opened before a session exists;
 * - a request answered as an event stream has its notifications relayed at once, while the stream
 *   still runs, and its response (the bytes as sent) delivered as the answer;
 * - a stream that ends without a response (the server cancelled the request) is no answer;
 * - `close()` ends the session stream and sends DELETE with the session id.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpBridge } from '../../../src/shared/bridge.js';
import { waitFor, withTimeout } from '../../helpers/wait.js';

const TOKEN = 'bridge-test-token';

interface Seen {
  method: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface FakeServer {
  url: string;
  seen: Seen[];
  /** The open `GET /mcp` stream, once the bridge opened it. */
  stream: ServerResponse | null;
  /** Ends the streamed answer under way: with its response, or without one. */
  release: ((response: string | null) => void) | null;
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"message":"a line"}}';
const RESPONSE = '{"jsonrpc":"2.0","id":"call","result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}}';

async function fakeServer(): Promise<FakeServer> {
  const fake: FakeServer = { url: '', seen: [], stream: null, release: null, close: async () => undefined };
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      fake.seen.push({ method: req.method ?? '', headers: req.headers, body });
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
        res.write(': the session stream is open\n\n');
        fake.stream = res;
        return;
      }
      if (req.method === 'DELETE') {
        res.writeHead(204).end();
        return;
      }
      const message = JSON.parse(body) as { method: string };
      if (message.method === 'initialize') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'session-1', 'Mcp-Peer-Id': 'p4' });
        res.end('{"jsonrpc":"2.0","id":"init","result":{}}');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.write(`event: message\ndata: ${PROGRESS}\n\n`);
      fake.release = (response) => res.end(response === null ? '' : `event: message\ndata: ${response}\n\n`);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return fake;
}

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: {} });
const call = JSON.stringify({ jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'x', _meta: { progressToken: 't' } } });

describe('HttpBridge', () => {
  it("opens the session's stream once initialize succeeded, and relays its frames as they come", async () => {
    const fake = await fakeServer();
    const relayed: string[] = [];
    const bridge = new HttpBridge(fake.url, TOKEN, (frame) => relayed.push(frame));
    expect(fake.seen).toEqual([]); // nothing before a session exists
    expect(await bridge.deliver(initialize)).toEqual({ kind: 'answer', text: '{"jsonrpc":"2.0","id":"init","result":{}}' });
    expect(bridge.peerId).toBe('p4');
    await waitFor(() => fake.stream !== null, { timeoutMs: 5_000, what: 'the bridge to open GET /mcp' });
    const get = fake.seen.find((seen) => seen.method === 'GET');
    expect(get?.headers).toMatchObject({ accept: 'text/event-stream', authorization: `Bearer ${TOKEN}`, 'mcp-session-id': 'session-1' });
    const news = '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"é — ✓"}}';
    fake.stream?.write(`event: message\ndata: ${news}\n\n`);
    await waitFor(() => relayed.length === 1, { timeoutMs: 5_000, what: 'the stream frame to be relayed' });
    expect(relayed).toEqual([news]);
    bridge.abort('done');
  });

  it('relays the notifications of a streamed answer at once, and answers with its response', async () => {
    const fake = await fakeServer();
    const bridge = new HttpBridge(fake.url, TOKEN);
    await bridge.deliver(initialize);
    const notified: string[] = [];
    const delivery = bridge.deliver(call, { notify: (frame) => notified.push(frame) });
    await waitFor(() => notified.length === 1, { timeoutMs: 5_000, what: 'the progress to be relayed before the answer' });
    expect(notified).toEqual([PROGRESS]);
    fake.release?.(RESPONSE);
    expect(await withTimeout(delivery, 5_000, 'the answer')).toEqual({ kind: 'answer', text: RESPONSE });
    const post = fake.seen.filter((seen) => seen.method === 'POST')[1];
    expect(post?.headers).toMatchObject({ accept: 'application/json, text/event-stream', 'mcp-session-id': 'session-1' });
  });

  it('answers nothing for a streamed answer that ends without a response (a cancelled request)', async () => {
    const fake = await fakeServer();
    const bridge = new HttpBridge(fake.url, TOKEN);
    await bridge.deliver(initialize);
    const delivery = bridge.deliver(call);
    await waitFor(() => fake.release !== null, { timeoutMs: 5_000, what: 'the call to reach the server' });
    fake.release?.(null);
    expect(await withTimeout(delivery, 5_000, 'the delivery')).toEqual({ kind: 'accepted' });
  });

  it('ends the session stream and sends DELETE on close', async () => {
    const fake = await fakeServer();
    const bridge = new HttpBridge(fake.url, TOKEN, () => undefined);
    await bridge.deliver(initialize);
    await waitFor(() => fake.stream !== null, { timeoutMs: 5_000, what: 'the bridge to open GET /mcp' });
    const streamClosed = new Promise<void>((resolve) => fake.stream?.on('close', () => resolve()));
    await bridge.close();
    await withTimeout(streamClosed, 5_000, 'the session stream to close');
    expect(fake.seen.at(-1)).toMatchObject({ method: 'DELETE', headers: { 'mcp-session-id': 'session-1' } });
  });
});
