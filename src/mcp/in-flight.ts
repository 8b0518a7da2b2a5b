/**
 * A session's requests under way that a client may cancel, by request id. Only a tool call runs
 * long enough to be worth it. MCP: a cancelled request is not answered; its work goes on unheard
 * unless its handler honours the signal.
 */
import type { JsonRpcId } from '../platform/jsonrpc.js';

/** Settles with `work`, or with `undefined` as soon as `signal` aborts (the work goes on unheard). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export class InFlight {
  readonly #requests = new Map<JsonRpcId, AbortController>();

  /** Tracks the request `id`: the controller's signal aborts when it is cancelled. */
  start(id: JsonRpcId): AbortController {
    const controller = new AbortController();
    this.#requests.set(id, controller);
    return controller;
  }

  /** The request has been answered (a later request may reuse its id). */
  end(id: JsonRpcId, controller: AbortController): void {
    if (this.#requests.get(id) === controller) this.#requests.delete(id);
  }

  /** Aborts the request `id`; false when none under way has that id. */
  cancel(id: JsonRpcId, reason: string): boolean {
    const controller = this.#requests.get(id);
    if (!controller) return false;
    this.#requests.delete(id);
    controller.abort(new Error(reason));
    return true;
  }

  cancelAll(reason: string): void {
    for (const id of [...this.#requests.keys()]) this.cancel(id, reason);
  }
}
