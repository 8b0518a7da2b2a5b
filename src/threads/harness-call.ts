/**
 * A harness call from a thread that does not hold the session table (the main thread for its own
 * client, the HTTP thread for every other caller) to the harness thread that does.
 */
import type { RpcClient } from '../platform/rpc.js';
import { PROGRESS_STREAM, TASK_STREAM, type CallContext, type CallOutcome } from '../platform/call.js';
import { type HarnessControl } from './harness.js';

/** A harness call may follow a session for up to an hour (`timeout_seconds` ≤ 3600), plus slack. */
export const HARNESS_CALL_TIMEOUT_MS = 3_700_000;

/**
 * One harness call over the RPC: its progress events become the caller's progress, the caller's
 * signal cancels it. Shared by the main and the HTTP thread.
 */
export function harnessCall(control: RpcClient<HarnessControl>, capabilityId: string, input: unknown, caller: string | null, call: CallContext): Promise<CallOutcome> {
  const { onProgress, onTask, signal } = call;
  const onEvent = (stream: string, data: unknown): void => {
    if (typeof data !== 'string') return;
    if (stream === PROGRESS_STREAM) onProgress?.(data);
    else if (stream === TASK_STREAM) onTask?.(data);
  };
  return control.callWith('invoke', [capabilityId, input, caller, call.depth ?? null, onTask !== undefined], {
    ...(onProgress || onTask ? { onEvent } : {}),
    ...(signal ? { signal } : {}),
  });
}

