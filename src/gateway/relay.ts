/**
 * Relaying a streamed answer, committed at its first byte: its bytes go to the client as they
 * come, unchanged, with backpressure both ways (while the client is behind, the provider is not
 * read). On the way they are parsed once as SSE, so the provider's kind can read its usage and
 * errors, and so the gateway knows where an event ends should it have to add one of its own.
 * A client of another wire (Anthropic's) gets each event translated by its front instead of the
 * bytes; the pace, the limits and the ending are the same.
 *
 * How it ends: the provider's end is the client's end; a break after the first byte cuts the
 * client's stream too (never retried); a provider silent for longer than `idle_timeout_seconds`
 * gets its request aborted and the client an `upstream_idle` error event, then the end. Each way
 * frees the slot and reports usage once; so does the client going away, which aborts the upstream.
 */
import type { ReplySink, StreamedReply } from '../platform/http-exchange.js';
import { log } from '../platform/log.js';
import { SseParser } from '../platform/sse.js';
import type { ChainEntry, ProviderConfig } from './config.js';
import type { Flow } from './flow.js';
import { IdleTimer } from './idle-timer.js';
import type { Release } from './limiter.js';
import { routeHeader } from './route-header.js';
import type { AttemptResult } from './upstream.js';
import { reportUsage } from './usage.js';

/** An event larger than this passes through unread (its usage is not counted): memory stays bounded. */
const MAX_READ_EVENT_CHARS = 1024 * 1024;

type Answer = Extract<AttemptResult, { kind: 'response' }>;

/** The message of the event that ends a stream whose provider went silent. */
export function idleMessage(entry: ChainEntry, idleTimeoutMs: number): string {
  const seconds = idleTimeoutMs / 1000;
  return `provider ${entry.provider}/${entry.model} sent nothing for ${seconds} s in the middle of its stream (providers.${entry.provider}.idle_timeout_seconds is ${seconds}); the stream was ended`;
}

export function relayStream(flow: Flow, entry: ChainEntry, provider: ProviderConfig, answer: Answer, release: Release): StreamedReply {
  const { body } = answer;
  const signal = flow.request.signal;
  const reader = provider.kind.streamReader();
  // Null for OpenAI's wire: its client reads the provider's own bytes.
  const translator = flow.front.streamTranslator(entry.model);
  let translated = '';
  const parser = new SseParser(
    (event) => {
      reader.event(event);
      if (translator) translated += translator.event(event);
    },
    { maxEventChars: MAX_READ_EVENT_CHARS },
  );
  let finished = false;
  let timer: IdleTimer | null = null;
  const finish = (ended: boolean): void => {
    if (finished) return;
    finished = true;
    timer?.stop();
    signal.removeEventListener('abort', onGone);
    release();
    reportUsage(flow, entry, reader.usage, ended && reader.error === null);
  };
  // Also before `start`: a client gone while the head was on its way never gets a sink.
  const onGone = (): void => {
    body.destroy();
    finish(false);
  };
  signal.addEventListener('abort', onGone, { once: true });
  if (signal.aborted) onGone();
  body.on('error', () => undefined); // the cut is handled on 'close'
  return {
    status: answer.status,
    contentType: translator ? flow.front.streamContentType : String(answer.headers['content-type'] ?? 'text/event-stream'),
    headers: [routeHeader(flow)],
    start: (sink: ReplySink) => {
      if (finished) return sink.end();
      let held = false;
      /** What arrived since the last write: the chunks of one read of the upstream, sent as one. */
      let pending: Buffer[] = [];
      const write = (piece: string | Buffer): void => {
        if (!sink.write(piece) && !held) {
          held = true;
          body.pause();
          timer?.pause(); // the silence is ours, not the provider's
          sink.onWritable(() => {
            held = false;
            timer?.start();
            body.resume();
          });
        }
      };
      // A provider's stream arrives as many small chunks, often several in one read; each written
      // alone cost a write to the client (a system call) per chunk. Those of one turn go together.
      const take = (): Buffer | null => {
        const pieces = pending;
        pending = [];
        return pieces.length === 0 ? null : pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
      };
      const flush = (): void => {
        const piece = take();
        if (piece !== null && !finished) write(piece);
      };
      const pass = (chunk: Buffer): void => {
        timer?.touch();
        if (translator === null) {
          if (pending.push(chunk) === 1) queueMicrotask(flush);
          parser.push(chunk);
          return;
        }
        parser.push(chunk);
        const out = translated;
        translated = '';
        if (out !== '') write(out);
      };
      /** The provider's stream ended: a translated one gets its closing events. */
      const ended = (): void => {
        if (translator !== null) {
          parser.end({ flush: true });
          const out = translated + translator.end();
          translated = '';
          if (out !== '') sink.write(out);
        }
        // The last chunks and the end leave together.
        sink.end(take() ?? undefined);
        finish(true);
      };
      // The first chunk goes out at once, with the head: it is the time to first byte (a
      // translated one as soon as it makes a whole event).
      if (answer.first) {
        if (translator === null) {
          timer?.touch();
          write(answer.first);
          parser.push(answer.first);
        } else {
          pass(answer.first);
        }
      }
      // It may have ended (a paused stream still ends once its buffer is empty) or broken
      // while the head went out.
      if (answer.ended || body.readableEnded) return ended();
      if (body.destroyed) {
        sink.cut();
        return finish(false);
      }
      timer = new IdleTimer(provider.idleTimeoutMs, () => {
        if (finished) return;
        log.warn(`gateway: ${entry.provider}/${entry.model}: no chunk for ${provider.idleTimeoutMs / 1000} s (idle_timeout_seconds); the stream ends with upstream_idle`);
        flush();
        finish(false);
        body.destroy(); // aborts the upstream request
        const lastEvent = flow.front.streamError('upstream_idle', idleMessage(entry, provider.idleTimeoutMs));
        // A passed-through stream may have stopped inside an event; a translated one never does.
        sink.write(translator === null ? parser.closing + lastEvent : lastEvent);
        sink.end();
      });
      if (!held) timer.start();
      body.on('data', pass);
      body.once('end', ended);
      body.once('close', () => {
        if (finished) return;
        log.warn(`gateway: ${entry.provider}/${entry.model}: the stream broke after its first byte; cut for the client too`);
        sink.cut();
        finish(false);
      });
      if (!held) body.resume();
    },
  };
}
