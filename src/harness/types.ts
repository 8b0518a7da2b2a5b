/**
 * What the parts of the harness share: the agents it can start, and the refusal every fixable
 * failure becomes (an `isError` tool result, HTTP 422 `refused`, whose text names the fix).
 */
import { CapabilityError, type WireErrorCode } from '../platform/errors.js';
import { PROFILE_AGENTS } from '../layer/kinds.js';

export type AgentName = (typeof PROFILE_AGENTS)[number];

/** A request the harness will not carry out as asked; the message says what to do instead. */
export class HarnessRefusal extends CapabilityError {
  constructor(message: string, code: WireErrorCode = 'refused') {
    super(code, message);
    this.name = 'HarnessRefusal';
  }
}
