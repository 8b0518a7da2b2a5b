/**
 * The bridge's HTTP client over node:net (src/platform/loopback-http.ts), against a real node:http
 * server on port 0. Covers: a body framed by Content-Length (split across packets), chunked, or
 * the close; a 204; the request line, Host, Connection: close, Content-Length and the headers
 * sent; headers read case-insensitively; a refused connection rejects with ECONNREFUSED; a
 * deadline; abort; a connection closed before the answer; an answer that is not HTTP.
 * An answer sent as text/event-stream: each event reaches onEvent while the stream still runs
 * (node:http, chunked); events and a multi-byte character cut across TCP writes are read whole;
 * a stream framed by the close ends with it; a chunked stream cut before its last chunk fails.
 */
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { loopbackRequest } from '../../../src/platform/loopback-http.js';
import { waitFor } from '../../helpers/wait.js';

const servers: Array<Server | NetServer> = [];
const sockets = new Set<import('node:net').Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  for (const server of servers.splice(0)) {
    (server as Server).closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => handler(req, res, body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function rawServer(answer: (socket: import('node:net').Socket) => void): Promise<string> {
  const server = createNetServer((socket) => {
    sockets.add(socket);
    answer(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('loopbackRequest', () => {
  it('sends the request line, Host, Connection: close, the headers and a Content-Length body', async () => {
    let seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string } | undefined;
    const base = await serve((req, res, body) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'abc' });
      res.end('{"ok":"é"}');
    });
    const answer = await loopbackRequest({ base, method: 'POST', path: '/mcp?x=1', headers: { Authorization: 'Bearer t' }, body: '{"a":"ü"}' }).response;
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('{"ok":"é"}');
    expect(answer.headers.get('mcp-session-id')).toBe('abc');
    expect(seen).toMatchObject({ method: 'POST', url: '/mcp?x=1', body: '{"a":"ü"}' });
    expect(seen?.headers).toMatchObject({ host: base.slice('http://'.length), connection: 'close', authorization: 'Bearer t', 'content-length': String(Buffer.byteLength('{"a":"ü"}')) });
  });

  it('reads a chunked body, a body split across packets, a body ended by the close, and a 204', async () => {
    const base = await serve((req, res) => {
      if (req.url === '/chunked') {
        res.writeHead(200);
        res.write('hello ');
        setTimeout(() => res.end('world'), 20);
      } else if (req.url === '/split') {
        res.writeHead(200, { 'Content-Length': '10' });
        res.write('01234');
        setTimeout(() => res.end('56789'), 20);
      } else {
        res.writeHead(204);
        res.end();
      }
    });
    expect((await loopbackRequest({ base, method: 'GET', path: '/chunked' }).response).body).toBe('hello world');
    expect((await loopbackRequest({ base, method: 'GET', path: '/split' }).response).body).toBe('0123456789');
    expect(await loopbackRequest({ base, method: 'DELETE', path: '/gone' }).response).toMatchObject({ status: 204, body: '' });
    const closed = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\nuntil the close'));
    expect((await loopbackRequest({ base: closed, method: 'GET', path: '/' }).response).body).toBe('until the close');
  });

  it('rejects with ECONNREFUSED when nothing listens, and on a deadline, an abort, an early close or an answer that is not HTTP', async () => {
    const dead = await rawServer(() => {});
    const port = new URL(dead).port;
    const server = servers.pop() as NetServer;
    await new Promise((resolve) => server.close(resolve));
    await expect(loopbackRequest({ base: `http://127.0.0.1:${port}`, method: 'GET', path: '/' }).response).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    const silent = await rawServer(() => {});
    await expect(loopbackRequest({ base: silent, method: 'GET', path: '/', timeoutMs: 100 }).response).rejects.toThrow('no answer within 100 ms');
    const pending = loopbackRequest({ base: silent, method: 'GET', path: '/' });
    pending.abort(new Error('given up'));
    await expect(pending.response).rejects.toThrow('given up');

    const hangUp = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort'));
    await expect(loopbackRequest({ base: hangUp, method: 'GET', path: '/' }).response).rejects.toThrow('closed the connection before answering');
    const junk = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH\r\n\r\n'));
    await expect(loopbackRequest({ base: junk, method: 'GET', path: '/' }).response).rejects.toThrow('not an HTTP/1.1 answer');
  });

  it('hands each event of an event stream to onEvent as it arrives, while the stream still runs', async () => {
    let finish: (() => void) | undefined;
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n');
      finish = () => res.end(': bye\n\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    });
    const events: string[] = [];
    const pending = loopbackRequest({ base, method: 'POST', path: '/mcp', body: '{}', onEvent: (data) => events.push(data) });
    await waitFor(() => events.length === 1, { timeoutMs: 5_000, what: 'the first event before the end' });
    expect(events).toEqual(['{"jsonrpc":"2.0","method":"notifications/progress"}']);
    finish?.();
    const answer = await pending.response;
    expect(answer).toMatchObject({ status: 200, body: '', eventStream: true });
    expect(events).toEqual(['{"jsonrpc":"2.0","method":"notifications/progress"}', '{"jsonrpc":"2.0","id":1,"result":{}}']);
  });

  it('reads events and a multi-byte character cut across TCP writes, in a chunked stream', async () => {
    const body = Buffer.from('event: message\ndata: {"text":"naïve — ✓"}\n\nevent: message\r\ndata: two\r\n\r\n', 'utf8');
    const cut = body.indexOf(Buffer.from('✓')) + 2; // between the bytes of ✓
    const chunked = Buffer.concat([
      Buffer.from(`${cut.toString(16)}\r\n`),
      body.subarray(0, cut),
      Buffer.from(`\r\n${(body.length - cut).toString(16)}\r\n`),
      body.subarray(cut),
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
    const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
    const base = await rawServer((socket) => {
      socket.setNoDelay(true);
      void (async () => {
        const bytes = Buffer.concat([Buffer.from(head), chunked]);
        // Cut inside the head, inside a size line, inside ✓ and inside the CRLFs.
        const cuts = [10, head.length + 1, head.length + 4 + cut - 1, head.length + 4 + cut + 3, bytes.length - 3, bytes.length];
        let start = 0;
        for (const end of cuts) {
          socket.write(bytes.subarray(start, end));
          start = end;
          await delay(15);
        }
      })();
    });
    const events: string[] = [];
    const answer = await loopbackRequest({ base, method: 'GET', path: '/mcp', onEvent: (data) => events.push(data) }).response;
    expect(answer.eventStream).toBe(true);
    expect(events).toEqual(['{"text":"naïve — ✓"}', 'two']);
  });

  it('ends an event stream framed by the close with the close, and fails a chunked one cut before its last chunk', async () => {
    const byClose = await rawServer((socket) =>
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: message\ndata: only\n\nevent: message\ndata: unfinished'),
    );
    const events: string[] = [];
    expect(await loopbackRequest({ base: byClose, method: 'GET', path: '/', onEvent: (data) => events.push(data) }).response).toMatchObject({ status: 200, eventStream: true });
    expect(events).toEqual(['only']);
    const cutShort = await rawServer((socket) =>
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n14\r\nevent: message\ndata:\r\n'),
    );
    await expect(loopbackRequest({ base: cutShort, method: 'GET', path: '/' }).response).rejects.toThrow('closed the connection before answering');
  });
});
