/**
 * A whole answer — not a stream, or a refusal that is the client's to read — read to its end
 * before it is forwarded with its length: a break in its middle is still a failure the gateway may
 * fail over on. The slot is freed once it is read. The client's front words it in its wire
 * (OpenAI's front forwards it as it is).
 */
import type { IncomingMessage } from 'node:http';
import type { HttpReply } from '../platform/http-exchange.js';
import type { ChainEntry, ProviderConfig } from './config.js';
import type { Flow } from './flow.js';
import type { Release } from './limiter.js';
import { routeHeader } from './route-header.js';
import type { AttemptResult } from './upstream.js';
import { reportUsage } from './usage.js';

/**
 * The rest of a body whose first chunk was read (null when it broke off). It may have ended, or
 * broken, while nobody listened: a paused stream still ends once its buffer is empty.
 */
function readAll(body: IncomingMessage, first: Buffer | null, ended: boolean, signal: AbortSignal): Promise<Buffer | null> {
  if (ended || body.readableEnded) return Promise.resolve(first ?? Buffer.alloc(0));
  if (body.destroyed) return Promise.resolve(null);
  return new Promise((resolve) => {
    const chunks: Buffer[] = first ? [first] : [];
    const onAbort = (): void => void body.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (value: Buffer | null): void => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    body.once('end', () => settle(Buffer.concat(chunks)));
    body.once('error', () => settle(null));
    body.once('close', () => settle(null)); // after 'end' this settles nothing new
    body.resume();
  });
}

/** The answer to forward, or null when it broke before it was whole. */
export async function readWhole(
  flow: Flow,
  entry: ChainEntry,
  provider: ProviderConfig,
  answer: Extract<AttemptResult, { kind: 'response' }>,
  release: Release,
): Promise<HttpReply | null> {
  let bytes: Buffer | null;
  try {
    bytes = await readAll(answer.body, answer.first, answer.ended, flow.request.signal);
  } finally {
    release();
  }
  if (bytes === null) return null;
  const ok = answer.status >= 200 && answer.status < 300;
  reportUsage(flow, entry, ok ? provider.kind.wholeUsage(bytes) : null, ok);
  const fronted = flow.front.whole({ status: answer.status, contentType: answer.headers['content-type'], body: bytes }, provider.kind, entry.model);
  const { contentType } = fronted;
  return { status: fronted.status, ...(contentType ? { contentType } : {}), headers: [routeHeader(flow)], body: fronted.body };
}
