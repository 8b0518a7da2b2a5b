/**
 * The one shutdown path of a serving process. Whatever ends it — the client's EOF, the last peer
 * leaving, a signal — runs the same steps once; concurrent callers wait on the same promise.
 *
 * A signal asks for a graceful stop (exit 0). If that does not finish within the deadline, or a
 * second signal arrives, the urgent steps (removing the lease) run synchronously and the process
 * dies of the signal — without tearing down the HTTP thread, which would abort the process.
 */
import { log } from '../platform/log.js';

export const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
const GRACE_MS = 5_000;

type Step = () => Promise<void> | void;

export class Shutdown {
  readonly #steps: Step[] = [];
  readonly #urgent: Array<() => void> = [];
  #running: Promise<void> | null = null;
  #signalled = false;

  /** A step of the graceful stop, run in the order added. */
  add(step: Step): void {
    this.#steps.push(step);
  }

  /** A synchronous step that must run even when the process dies of a signal (the lease). */
  addUrgent(step: () => void): void {
    this.#urgent.push(step);
  }

  get started(): boolean {
    return this.#running !== null;
  }

  run(reason: string): Promise<void> {
    this.#running ??= (async () => {
      log.debug(`shutting down: ${reason}`);
      for (const step of this.#steps) {
        try {
          await step();
        } catch (error) {
          log.warn(`a shutdown step failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      this.#runUrgent();
    })();
    return this.#running;
  }

  /** Installs the signal handlers; resolves `onSignal` with the graceful stop. */
  handleSignals(onSignal: (signal: NodeJS.Signals) => void): void {
    for (const signal of SHUTDOWN_SIGNALS) {
      process.on(signal, () => {
        if (this.#signalled) return this.#die(signal);
        this.#signalled = true;
        log.info(`${signal} received: stopping`);
        setTimeout(() => this.#die(signal), GRACE_MS).unref();
        onSignal(signal);
      });
    }
  }

  #runUrgent(): void {
    while (this.#urgent.length > 0) {
      try {
        this.#urgent.shift()?.();
      } catch (error) {
        log.warn(`an urgent shutdown step failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  #die(signal: NodeJS.Signals): void {
    this.#runUrgent();
    for (const s of SHUTDOWN_SIGNALS) process.removeAllListeners(s);
    process.kill(process.pid, signal);
  }
}
