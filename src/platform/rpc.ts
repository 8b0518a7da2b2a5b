/**
 * Calls between threads over a `MessagePort`, answered every time. Arguments and answers cross
 * as JSON text, never as structured clones: a string always deserialises, where a deep object the
 * sender could clone may fail to deserialise on the other side (`messageerror`) and leave the
 * caller waiting for an answer that never comes. Every call also ends with a deadline, and every
 * pending call fails when the port closes (the other thread has gone).
 *
 * A `SharedArrayBuffer` argument is the exception: it crosses as itself, beside the JSON text
 * (shared memory, never copied — how a new generation's snapshot reaches a thread).
 *
 * A call may also stream: before its answer the handler posts events (`{kind: 'event', stream,
 * data}`, data as JSON text) that reach the caller's listener of that call, and the caller may
 * cancel it (`{kind: 'cancel'}`), which aborts the handler's signal. That is how a capability
 * running in another thread reports progress and learns that its caller has gone.
 */
import type { MessagePort } from 'node:worker_threads';

/** What one side offers: async methods whose arguments and answers are plain JSON data. */
export type RpcHandlers<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

/** What a served handler is given after its arguments: its call's event channel and cancellation. */
export interface RpcCallScope {
  /** Whether the caller listens to this call's events (without a listener `emit` posts nothing). */
  readonly listening: boolean;
  /** Posts an event of `stream` to the caller's listener of this call; dropped once the call ended. */
  emit(stream: string, data: unknown): void;
  /** Aborts when the caller cancels this call or its thread goes away. */
  readonly signal: AbortSignal;
}

/** The handlers `serveRpc` takes for `T`: each method may take the call's scope after its arguments. */
export type RpcServed<T extends RpcHandlers<T>> = {
  [K in keyof T]: (...args: [...Parameters<T[K]>, RpcCallScope]) => ReturnType<T[K]>;
};

/** What a caller attaches to one call (`callWith`). */
export interface RpcCallOptions {
  /** Receives the call's events, in order, until it is answered. */
  onEvent?: (stream: string, data: unknown) => void;
  /** Aborting it cancels the call: the handler's signal aborts and the call rejects at once. */
  signal?: AbortSignal;
  /** This call's deadline (ms) instead of the method's; `Infinity` for none (cancel it instead). */
  timeoutMs?: number;
}

type Request =
  | { kind: 'call'; id: number; method: string; args: string; listening?: true; shared?: SharedArrayBuffer[] }
  | { kind: 'cancel'; id: number };

/** Marks where a `SharedArrayBuffer` argument stood in the JSON text (its index in `shared`). */
const SHARED_MARK = '$majordomusShared';

/** The arguments as JSON text, each SharedArrayBuffer replaced by a mark and kept aside. */
function encodeArgs(args: unknown[]): { args: string; shared?: SharedArrayBuffer[] } {
  const shared: SharedArrayBuffer[] = [];
  const text = JSON.stringify(args, (_key, value: unknown) => (value instanceof SharedArrayBuffer ? { [SHARED_MARK]: shared.push(value) - 1 } : value));
  return shared.length === 0 ? { args: text } : { args: text, shared };
}

function decodeArgs(text: string, shared: SharedArrayBuffer[] | undefined): unknown[] {
  if (shared === undefined) return JSON.parse(text) as unknown[];
  return JSON.parse(text, (_key, value: unknown) => {
    const mark = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[SHARED_MARK] : undefined;
    return typeof mark === 'number' && shared[mark] !== undefined ? shared[mark] : value;
  }) as unknown[];
}
type Answer = { ok: true; value: string } | { ok: false; message: string };
type Reply = ({ kind: 'reply'; id: number } & Answer) | { kind: 'event'; id: number; stream: string; data: string };

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
export function serveRpc<T extends RpcHandlers<T>>(port: MessagePort, handlers: RpcServed<T>): void {
  const running = new Map<number, AbortController>();
  const post = (message: Reply): boolean => {
    try {
      port.postMessage(message);
      return true;
    } catch {
      // The port closed meanwhile: the caller's side has gone and fails its own calls.
      return false;
    }
  };
  port.on('close', () => {
    for (const controller of running.values()) controller.abort(new RpcError('the other thread has gone'));
    running.clear();
  });
  port.on('message', (message: Request) => {
    if (message?.kind === 'cancel') {
      running.get(message.id)?.abort(new RpcError('the caller cancelled the call'));
      return;
    }
    if (message?.kind !== 'call') return;
    const { id } = message;
    const handler = Object.hasOwn(handlers, message.method)
      ? (handlers[message.method as keyof T] as unknown as (...args: unknown[]) => Promise<unknown>)
      : undefined;
    if (handler === undefined) {
      post({ kind: 'reply', id, ok: false, message: `no method ${message.method}` });
      return;
    }
    const controller = new AbortController();
    running.set(id, controller);
    const listening = message.listening === true;
    const scope: RpcCallScope = {
      listening,
      emit: (stream, data) => {
        if (listening && running.get(id) === controller) post({ kind: 'event', id, stream, data: JSON.stringify(data) ?? 'null' });
      },
      signal: controller.signal,
    };
    const reply = (answer: Answer): void => {
      running.delete(id);
      post({ kind: 'reply', id, ...answer });
    };
    Promise.resolve()
      .then(() => handler(...decodeArgs(message.args, message.shared), scope))
      .then(
        (value) => reply({ ok: true, value: JSON.stringify(value) ?? 'null' }),
        (error: unknown) => reply({ ok: false, message: describe(error) }),
      );
  });
}

/** The calling side of `serveRpc`: one typed method per handler. */
export type RpcClient<T extends RpcHandlers<T>> = { [K in keyof T]: (...args: Parameters<T[K]>) => ReturnType<T[K]> } & {
  /** Calls `method` with a listener for its events, a signal that cancels it, or its own deadline. */
  callWith<K extends keyof T & string>(method: K, args: Parameters<T[K]>, options: RpcCallOptions): ReturnType<T[K]>;
  /** Fails every pending call and stops listening. */
  close(why: string): void;
};

interface PendingCall {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
  onEvent: RpcCallOptions['onEvent'];
  /** Stops listening to the caller's signal. */
  unlisten: () => void;
}

export function rpcClient<T extends RpcHandlers<T>>(port: MessagePort, methods: ReadonlyArray<keyof T & string>, options: RpcClientOptions): RpcClient<T> {
  const pending = new Map<number, PendingCall>();
  let next = 0;
  let closed: string | null = null;
  const settle = (id: number): PendingCall | undefined => {
    const call = pending.get(id);
    if (!call) return undefined;
    pending.delete(id);
    clearTimeout(call.timer);
    call.unlisten();
    return call;
  };
  const failAll = (why: string): void => {
    closed ??= why;
    for (const id of [...pending.keys()]) settle(id)?.reject(new RpcError(why));
  };
  port.on('message', (message: Reply) => {
    if (message?.kind === 'event') {
      const onEvent = pending.get(message.id)?.onEvent;
      if (onEvent) onEvent(message.stream, JSON.parse(message.data));
      return;
    }
    if (message?.kind !== 'reply') return;
    const call = settle(message.id);
    if (!call) return;
    if (message.ok) call.resolve(JSON.parse(message.value));
    else call.reject(new RpcError(message.message));
  });
  port.on('close', () => failAll('the other thread has gone'));

  const call = (method: string, args: unknown[], extra: RpcCallOptions = {}): Promise<unknown> => {
    if (closed !== null) return Promise.reject(new RpcError(closed));
    if (extra.signal?.aborted) return Promise.reject(new RpcError(`${method} was cancelled`));
    const id = ++next;
    const timeoutMs = extra.timeoutMs ?? options.timeouts?.[method] ?? options.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            settle(id);
            reject(new RpcError(`${method} was not answered within ${timeoutMs} ms`));
          }, timeoutMs)
        : undefined;
      timer?.unref();
      const { signal } = extra;
      const onAbort = (): void => {
        if (!settle(id)) return;
        reject(new RpcError(`${method} was cancelled`));
        try {
          port.postMessage({ kind: 'cancel', id } satisfies Request);
        } catch {
          // The other side has gone: nothing runs there any more.
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const unlisten = (): void => signal?.removeEventListener('abort', onAbort);
      pending.set(id, { resolve, reject, timer, onEvent: extra.onEvent, unlisten });
      try {
        const call: Request = { kind: 'call', id, method, ...encodeArgs(args) };
        if (extra.onEvent) call.listening = true;
        port.postMessage(call);
      } catch (error) {
        settle(id);
        reject(new RpcError(`${method} could not be sent: ${describe(error)}`));
      }
    });
  };
  const client: Record<string, unknown> = {
    close: failAll,
    callWith: (method: string, args: unknown[], extra: RpcCallOptions) => call(method, args, extra),
  };
  for (const method of methods) client[method] = (...args: unknown[]) => call(method, args);
  return client as RpcClient<T>;
}
