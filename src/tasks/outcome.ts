/**
 * What an executor turn ended with, read back from its transcript: the `result` event that every
 * `majordomus exec` turn ends with (src/harness/vendors/executor.ts), and the last tool it called.
 * A turn's transcript is read from its end, so a long turn costs one bounded read.
 */
import { tailLines } from '../harness/transcript.js';

import { TURN_STATES, type TurnStatus } from '../executor/events.js';

export interface TurnOutcome {
  /** The result event's state; null when the turn ended without one (it crashed or was killed). */
  state: TurnStatus | null;
  answer: string | null;
  question: string | null;
  options: string[];
  error: string | null;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** Model requests the turn made, as its result event counts them. */
  requests: number;
  /** The last tool the turn called: its name and a one-line summary. */
  lastTool: string | null;
}

/** How far back a turn's end is looked for: the result is its last line, the last tool call near it. */
const TAIL_LINES = 200;
const TAIL_BYTES = 512 * 1024;

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export async function readTurnOutcome(transcriptPath: string): Promise<TurnOutcome> {
  const { lines } = await tailLines(transcriptPath, TAIL_LINES, { maxBytes: TAIL_BYTES });
  const outcome: TurnOutcome = {
    state: null,
    answer: null,
    question: null,
    options: [],
    error: null,
    usage: { prompt_tokens: 0, completion_tokens: 0 },
    requests: 0,
    lastTool: null,
  };
  for (const line of lines) {
    let entry: Record<string, unknown> | null;
    try {
      entry = record(JSON.parse(line));
    } catch {
      continue;
    }
    const event = record(entry?.event);
    if (event === null) continue;
    if (event.type === 'tool_call') outcome.lastTool = text(entry?.text) ?? text(event.name);
    if (event.type !== 'result') continue;
    const state = text(event.status);
    outcome.state = (TURN_STATES as readonly string[]).includes(state ?? '') ? (state as TurnStatus) : 'error';
    outcome.answer = text(event.answer);
    outcome.question = text(event.question);
    outcome.options = Array.isArray(event.options) ? event.options.filter((o): o is string => typeof o === 'string') : [];
    outcome.error = text(event.error) ?? (outcome.state === 'error' && state !== 'error' ? `the executor reported an unknown state ${JSON.stringify(state)}` : null);
    const usage = record(event.usage);
    outcome.usage = { prompt_tokens: count(usage?.prompt_tokens), completion_tokens: count(usage?.completion_tokens) };
    outcome.requests = count(event.requests);
  }
  return outcome;
}
