/**
 * MCP over stdio: newline-delimited JSON-RPC on stdin/stdout. stdout carries protocol frames and
 * nothing else. Each frame is handled as soon as it arrives — a tool call that follows an agent
 * for minutes must not hold up the client's other requests, nor the `notifications/cancelled`
 * that stops it — and every answer or notification is written, one whole frame per write, as soon
 * as it is ready. One exception keeps a client that writes without waiting (a script piping its
 * frames in) working: frames that arrive while an `initialize` is being answered wait for that
 * answer, as a client that waits would have. A frame longer than `MAX_FRAME_BYTES` is answered
 * with an error and skipped without being held in memory. EOF or a broken stdout pipe ends the
 * session; answers still being computed then get a short grace, never an unbounded wait.
 */
import type { Readable, Writable } from 'node:stream';
import { log } from '../platform/log.js';
import { errorFrameFor, errorResponse, frameHead, RPC, type JsonRpcId } from '../platform/jsonrpc.js';

/** The largest frame accepted: the same bound as an HTTP body (1 MiB). */
export const MAX_FRAME_BYTES = 1024 * 1024;
/** After EOF, answers in progress may take this long before the session ends anyway. */
export const EOF_GRACE_MS = 5_000;

/** What serves the frames of one stdio client. */
export interface FrameHandler {
  /**
   * Answers one frame's text with the frame to write back, if any. `notify` writes a frame at
   * once: the notifications a request sends before its answer (its progress).
   */
  handleLine(line: string, notify: (frame: string) => void): Promise<string | undefined>;
  /** Takes the writer of the frames the server sends on its own (notifications tied to no request). */
  streamTo?(write: (frame: string) => void): void;
}

/**
 * The id of an oversized frame, read from what is kept of it: serializers write `id` right after
 * `jsonrpc` (most) or last (the MCP SDK). Unknown → null, as JSON-RPC answers an unreadable frame.
 */
function oversizedFrameId(head: string, tail: string): JsonRpcId | null {
  const match = /^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})\s*,/.exec(head) ?? /,\s*"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})\s*\}\s*$/.exec(tail);
  if (!match) return null;
  try {
    return JSON.parse(match[1] as string) as JsonRpcId;
  } catch {
    return null;
  }
}

/** Whether a frame is an `initialize` request (most are not: the text is looked at before parsing). */
function isInitialize(line: string): boolean {
  if (!line.includes('"initialize"')) return false;
  const head = frameHead(line);
  return head.kind === 'request' && head.method === 'initialize';
}

/** Splits a byte stream into lines, dropping (and reporting) lines over the limit. */
class LineReader {
  #parts: Buffer[] = [];
  #size = 0;
  #oversized = false;
  #head = '';
  #tail = '';

  constructor(
    readonly onLine: (line: string) => void,
    readonly onOversized: (id: JsonRpcId | null, bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      this.#append(piece);
      if (newline === -1) return;
      this.#endLine();
      start = newline + 1;
    }
  }

  /** The input ended: a last line without a newline still counts. */
  end(): void {
    if (this.#size > 0 || this.#oversized) this.#endLine();
  }

  #append(piece: Buffer): void {
    if (piece.length === 0) return;
    this.#size += piece.length;
    if (this.#oversized) {
      this.#tail = (this.#tail + piece.subarray(Math.max(0, piece.length - 4096)).toString('utf8')).slice(-4096);
      return;
    }
    this.#parts.push(piece);
    if (this.#size > MAX_FRAME_BYTES) {
      const kept = Buffer.concat(this.#parts);
      this.#head = kept.subarray(0, 4096).toString('utf8');
      this.#tail = kept.subarray(kept.length - 4096).toString('utf8');
      this.#parts = [];
      this.#oversized = true;
    }
  }

  #endLine(): void {
    if (this.#oversized) {
      this.onOversized(oversizedFrameId(this.#head, this.#tail), this.#size);
    } else {
      const line = Buffer.concat(this.#parts).toString('utf8').replace(/\r$/, '');
      if (line.trim().length > 0) this.onLine(line);
    }
    this.#parts = [];
    this.#size = 0;
    this.#oversized = false;
    this.#head = '';
    this.#tail = '';
  }
}

/** Serves frames from `input` until EOF (or a broken `output`); resolves when the session is over. */
export function serveStdio(handler: FrameHandler, input: Readable, output: Writable): Promise<void> {
  return new Promise((resolve) => {
    let ended = false;
    /** Frames being handled; EOF waits for them (bounded by the grace). */
    const pending = new Set<Promise<void>>();
    /** The `initialize` being answered: frames arriving meanwhile wait for it. */
    let initializing: Promise<void> | null = null;
    const write = (frame: string): void => {
      if (!output.destroyed) output.write(`${frame}\n`);
    };
    const track = (task: Promise<void>): void => {
      pending.add(task);
      void task.then(() => pending.delete(task));
    };
    const finish = (): void => {
      if (ended) return;
      ended = true;
      input.off('data', onData);
      const grace = setTimeout(resolve, EOF_GRACE_MS);
      grace.unref();
      void Promise.all(pending).then(() => {
        clearTimeout(grace);
        resolve();
      });
    };
    const reader = new LineReader(
      (line) => {
        const task = (initializing ?? Promise.resolve())
          .then(() => handler.handleLine(line, write))
          .then((frame) => {
            if (frame !== undefined) write(frame);
          })
          // A handler that throws is answered -32603 (never silence), and the other lines go on.
          .catch((error: unknown) => {
            const why = error instanceof Error ? error.message : String(error);
            log.error(`a stdio frame failed: ${why}`);
            const frame = errorFrameFor(line, RPC.internalError, `Internal error: ${why}`);
            if (frame !== undefined) write(frame);
          });
        track(task);
        if (isInitialize(line)) {
          initializing = task;
          void task.then(() => {
            if (initializing === task) initializing = null;
          });
        }
      },
      (id, bytes) => {
        log.warn(`refused a ${bytes}-byte stdio frame (the limit is ${MAX_FRAME_BYTES})`);
        write(JSON.stringify(errorResponse(id, RPC.invalidRequest, `Invalid Request: the message is ${bytes} bytes, over the ${MAX_FRAME_BYTES}-byte limit`)));
      },
    );
    // What the server says on its own is for a client that is still there.
    handler.streamTo?.((frame) => {
      if (!ended) write(frame);
    });
    const onData = (chunk: Buffer | string): void => reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    output.on('error', (error: NodeJS.ErrnoException) => {
      log.debug(`stdout closed (${error.code ?? error.message}); ending the session`);
      finish();
    });
    input.on('data', onData);
    input.on('end', () => {
      reader.end();
      finish();
    });
    input.on('error', finish);
    input.on('close', finish);
  });
}
