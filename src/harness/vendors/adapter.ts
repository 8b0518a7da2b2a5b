/**
 * What the harness needs from each agent CLI: how to launch a turn (argv and stdin) and how to read
 * the turn's stdout (one normalized transcript entry per line, plus the session id, the end of the
 * turn, the answer and an error). One module per agent implements it; nothing else in the harness
 * knows a vendor's flags or event shapes.
 */
import type { AgentName } from '../types.js';

/** How a turn is launched; the same shape is replayed for every later turn (cwd, mode, …). */
export interface LaunchShape {
  /** The turn's prompt text. */
  prompt: string;
  /** Absolute, already checked to be inside the checkout. */
  cwd: string;
  model?: string;
  effort?: string;
  mode?: string;
  /** Profile args then spawn args, appended as given. */
  args: readonly string[];
}

export interface Invocation {
  /** argv after the command. */
  args: string[];
  /** Written to the child's stdin, then stdin is closed; null: stdin closed at once. */
  stdin: string | null;
  /**
   * Indexes into `args` of values sessionInfo must not show: the vendor's session id (it never
   * goes on the wire) and the prompt when it travels as an argument (sessionInfo shows its size).
   */
  hidden: number[];
}

export interface VendorAdapter {
  readonly agent: AgentName;
  /** The executable when the profile names no `command` (looked up on PATH). */
  readonly defaultCommand: string;
  /** Arguments that go before `invocation().args` only when `defaultCommand` runs (a script's path). */
  readonly defaultCommandArgs?: readonly string[];
  /**
   * The CLI's permission modes, narrowest first, and the one it runs with when none is given. A
   * spawn or turn may narrow a profile's mode along this order, never widen it (src/harness/modes.ts).
   */
  readonly modes: readonly string[];
  readonly defaultMode: string;
  /** Refuses (throws HarnessRefusal with a message naming the fix) what the CLI cannot express. */
  invocation(shape: LaunchShape, resumeId: string | null): Invocation;
  /** Flags whose next argv value is secret-looking are redacted in sessionInfo: adapter-specific extras. */
  readonly secretFlags?: readonly string[];
  turnParser(): TurnParser;
}

/** One turn's stdout, line by line. */
export interface TurnParser {
  /** One complete stdout line (no newline). Answers the normalized transcript entry. */
  line(text: string): TranscriptEntry;
  /** The vendor's session id, once an event carried one. Never goes on the wire. */
  readonly vendorId: string | null;
  /** The CLI reported the turn's end (claude/gemini `result`, codex `turn.completed`, …). */
  readonly ended: boolean;
  /** The answer so far (decided by the adapter's rule), null if none. */
  readonly answer: string | null;
  /** An error event wins over a normal ending: its message, or null. */
  readonly error: string | null;
}

export type TranscriptKind = 'system' | 'assistant' | 'tool_use' | 'tool_result' | 'result' | 'error' | 'user' | 'other' | 'text';

/** One transcript line, the same shape for every vendor (written as one JSON line). */
export interface TranscriptEntry {
  kind: TranscriptKind;
  /** Short human text when the event has some (assistant text, tool name + input summary, error message). */
  text?: string;
  /** The CLI's own event (parsed JSON), or the raw line as a string when it is not JSON. */
  event: unknown;
}
