/**
 * MCP over stdio: newline-delimited JSON-RPC on stdin/stdout. stdout carries protocol frames and
 * nothing else. Frames are answered in order. EOF or a broken stdout pipe ends the session.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { log } from '../log.js';

/** Answers one frame's text with the frame to write back, if any. */
export interface FrameHandler {
  handleLine(line: string): Promise<string | undefined>;
}

/** The id of a request line; undefined for a notification or text that is not JSON. */
function requestId(line: string): string | number | undefined {
  try {
    const { id, method } = JSON.parse(line) as { id?: unknown; method?: unknown };
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Serves frames from `input` until EOF (or a broken `output`); resolves when the session is over. */
export function serveStdio(handler: FrameHandler, input: Readable, output: Writable): Promise<void> {
  return new Promise((resolve) => {
    let ended = false;
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    let queue = Promise.resolve();
    const finish = (): void => {
      if (ended) return;
      ended = true;
      lines.close();
      void queue.then(() => resolve());
    };
    output.on('error', (error: NodeJS.ErrnoException) => {
      log.debug(`stdout closed (${error.code ?? error.message}); ending the session`);
      finish();
    });
    lines.on('line', (line) => {
      if (line.trim().length === 0) return;
      queue = queue
        .then(async () => {
          if (ended && output.destroyed) return;
          const frame = await handler.handleLine(line);
          if (frame !== undefined && !output.destroyed) output.write(`${frame}\n`);
        })
        // A handler that throws is answered -32603 (never silence), and the lines after it go on.
        .catch((error: unknown) => {
          const why = error instanceof Error ? error.message : String(error);
          log.error(`a stdio frame failed: ${why}`);
          const id = requestId(line);
          if (id !== undefined && !output.destroyed) {
            output.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: `Internal error: ${why}` } })}\n`);
          }
        });
    });
    lines.on('close', finish);
  });
}
