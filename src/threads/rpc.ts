/**
 * Calls between threads over a `MessagePort`, answered every time. Arguments and answers cross
 * as JSON text, never as structured clones: a string always deserialises, where a deep object the
 * sender could clone may fail to deserialise on the other side (`messageerror`) and leave the
 * caller waiting for an answer that never comes. Every call also ends with a deadline, and every
 * pending call fails when the port closes (the other thread has gone).
 */
import type { MessagePort } from 'node:worker_threads';

/** What one side offers: async methods whose arguments and answers are plain JSON data. */
export type RpcHandlers<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

type Request = { kind: 'call'; id: number; method: string; args: string };
type Answer = { ok: true; value: string } | { ok: false; message: string };
type Reply = { kind: 'reply'; id: number } & Answer;

/** A call that failed on the other side, timed out or lost its thread. */
export class RpcError extends Error {
  override name = 'RpcError';
}

export interface RpcClientOptions {
  /** How long a call may take before it fails (ms). */
  timeoutMs: number;
  /** Per-method deadlines that differ from `timeoutMs`. */
  timeouts?: Readonly<Record<string, number>>;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Answers calls arriving on `port` with `handlers`; answers an error for anything else. */
export function serveRpc<T extends RpcHandlers<T>>(port: MessagePort, handlers: T): void {
  port.on('message', (message: Request) => {
    if (message?.kind !== 'call') return;
    const reply = (answer: Answer): void => {
      try {
        port.postMessage({ kind: 'reply', id: message.id, ...answer });
      } catch {
        // The port closed meanwhile: the caller's side has gone and fails its own calls.
      }
    };
    const handler = Object.hasOwn(handlers, message.method)
      ? (handlers[message.method as keyof T] as (...args: never[]) => Promise<unknown>)
      : undefined;
    if (handler === undefined) {
      reply({ ok: false, message: `no method ${message.method}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(...(JSON.parse(message.args) as never[])))
      .then(
        (value) => reply({ ok: true, value: JSON.stringify(value) ?? 'null' }),
        (error: unknown) => reply({ ok: false, message: describe(error) }),
      );
  });
}

/** The calling side of `serveRpc`: one typed method per handler. */
export type RpcClient<T extends RpcHandlers<T>> = { [K in keyof T]: (...args: Parameters<T[K]>) => ReturnType<T[K]> } & {
  /** Fails every pending call and stops listening. */
  close(why: string): void;
};

export function rpcClient<T extends RpcHandlers<T>>(port: MessagePort, methods: ReadonlyArray<keyof T & string>, options: RpcClientOptions): RpcClient<T> {
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let next = 0;
  let closed: string | null = null;
  const failAll = (why: string): void => {
    closed ??= why;
    for (const [id, call] of pending) {
      clearTimeout(call.timer);
      call.reject(new RpcError(why));
      pending.delete(id);
    }
  };
  port.on('message', (message: Reply) => {
    if (message?.kind !== 'reply') return;
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    clearTimeout(call.timer);
    if (message.ok) call.resolve(JSON.parse(message.value));
    else call.reject(new RpcError(message.message));
  });
  port.on('close', () => failAll('the other thread has gone'));

  const call = (method: string, args: unknown[]): Promise<unknown> => {
    if (closed !== null) return Promise.reject(new RpcError(closed));
    const id = ++next;
    const timeoutMs = options.timeouts?.[method] ?? options.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new RpcError(`${method} was not answered within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      pending.set(id, { resolve, reject, timer });
      try {
        port.postMessage({ kind: 'call', id, method, args: JSON.stringify(args) } satisfies Request);
      } catch (error) {
        pending.delete(id);
        clearTimeout(timer);
        reject(new RpcError(`${method} could not be sent: ${describe(error)}`));
      }
    });
  };
  const client: Record<string, unknown> = { close: failAll };
  for (const method of methods) client[method] = (...args: unknown[]) => call(method, args);
  return client as RpcClient<T>;
}
