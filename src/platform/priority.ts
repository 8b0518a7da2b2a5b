/**
 * HTTP threads yield to the owner's stdio session (ADR 3, invariant 3): on Linux a thread's nice
 * value is its own, so the HTTP thread and the pool threads lower theirs and the main thread wins
 * the CPU whenever both want it. Best effort: where it is not allowed, nothing changes.
 */
import { setPriority } from 'node:os';

/** Lowers this thread's priority to `nice` (`MAJORDOMUS_HTTP_NICE`, default 10; 0 keeps it). */
export function yieldToMainThread(nice: number): void {
  if (!Number.isInteger(nice) || nice <= 0) return;
  try {
    setPriority(0, Math.min(nice, 19));
  } catch {
    // Not permitted here; the threads keep the default priority.
  }
}
