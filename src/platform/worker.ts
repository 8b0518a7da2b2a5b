/**
 * Starting and stopping a worker thread of ours, in one place. Each thread (HTTP, harness, layer
 * build) has the same life: it is created with its data and the ports it is handed; it may post a
 * start message (ready, listening, failed) before it serves; its stop is registered with the exit
 * hooks, so that every orderly end of the process stops it first (a uWS app still open in an
 * ending thread aborts the process); and it may end without being asked (a crash).
 *
 * `stop()` is safe to call twice: every caller awaits the same promise (undici's
 * dispatcher-base). The thread's own stop call, when it has one, is raced with its exit: a thread
 * that has gone answers no call.
 */
import { Worker, type Transferable } from 'node:worker_threads';
import { onExit } from './exit-hooks.js';

export interface ThreadOptions<Data> {
  /** How messages name the thread ("the HTTP thread"). */
  name: string;
  file: URL;
  workerData: Data;
  transferList?: readonly Transferable[];
  /** The thread never keeps the process alive on its own account (the layer build worker). */
  unref?: boolean;
  /** Asks the thread to end by itself (its control's stop call); `stop()` then waits for its exit. Without it `stop()` terminates the thread. */
  shutdown?: () => Promise<unknown>;
  /** Releases what the caller holds for the thread (its ports, its pending work) once it has ended by `stop()`. */
  afterStop?: () => Promise<unknown> | void;
  /** An uncaught error of the thread (the thread ends with it). */
  onError: (error: Error) => void;
}

export interface Thread {
  readonly worker: Worker;
  /** Resolves with the exit code once the thread has ended, however it ended. */
  readonly exited: Promise<number>;
  /** Whether `stop()` (or `terminate()`) was called. */
  readonly stopping: boolean;
  /**
   * The thread's first message, typed as its start message. A thread that ends first answers
   * `failed(why)`; so does one still silent after `deadlineMs`, which is terminated.
   */
  started<Start>(deadlineMs: number, failed: (why: string) => Start): Promise<Start>;
  /** `call`'s answer, or undefined when it failed or the thread ended first (a thread that has gone answers nothing). */
  untilExit<T>(call: Promise<T>): Promise<T | undefined>;
  /** Called once if the thread ends before `stop()` was called. */
  onUnexpectedExit(listener: (why: string) => void): void;
  /** Ends the thread (its `shutdown`, else terminate), waits for its exit, releases. Safe to call twice. */
  stop(): Promise<void>;
  /** Ends the thread at once (a start that failed); shares `stop()`'s promise when one is under way. */
  terminate(): Promise<void>;
}

/** Starts a worker thread and registers its stop with the exit hooks. */
export function startThread<Data>(options: ThreadOptions<Data>): Thread {
  const worker = new Worker(options.file, { workerData: options.workerData, transferList: [...(options.transferList ?? [])] });
  if (options.unref === true) worker.unref();
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  // The first message is caught from the start: a message nobody listens to is lost.
  const first = new Promise<unknown>((resolve) => worker.once('message', resolve));
  worker.on('error', options.onError);

  let stopping: Promise<void> | null = null;
  let unexpected: ((why: string) => void) | null = null;
  let forget = (): void => {};
  void exited.then((code) => {
    forget();
    if (stopping === null) unexpected?.(`exit code ${code}`);
  });

  const end = (graceful: boolean): Promise<void> => {
    stopping ??= (async () => {
      if (graceful && options.shutdown !== undefined) await thread.untilExit(options.shutdown());
      else await worker.terminate().catch(() => undefined);
      await exited;
      forget();
      await options.afterStop?.();
    })();
    return stopping;
  };

  const thread: Thread = {
    worker,
    exited,
    get stopping() {
      return stopping !== null;
    },
    async started<Start>(deadlineMs: number, failed: (why: string) => Start): Promise<Start> {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), deadlineMs)));
      const outcome = await Promise.race([first.then((message) => ({ message })), exited.then((code) => ({ code })), deadline]);
      clearTimeout(timer);
      if (outcome === 'deadline') {
        await worker.terminate().catch(() => undefined);
        return failed(`${options.name} did not start within ${deadlineMs} ms`);
      }
      if ('code' in outcome) return failed(`${options.name} ended (code ${outcome.code}) before it was ready`);
      return outcome.message as Start;
    },
    untilExit: <T>(call: Promise<T>): Promise<T | undefined> => Promise.race([call.catch(() => undefined), exited.then(() => undefined)]),
    onUnexpectedExit(listener) {
      unexpected = listener;
    },
    stop: () => end(true),
    terminate: () => end(false),
  };
  forget = onExit(() => thread.stop());
  return thread;
}
