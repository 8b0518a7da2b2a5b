/**
 * What every vendor parser shares: reading one stdout line as a JSON event, short human text for
 * the transcript, and the turn state (session id, end, answer, error) each parser fills in.
 */
import { HarnessRefusal, type AgentName } from '../types.js';
import type { TranscriptEntry, TranscriptKind, TurnParser } from './adapter.js';

/** `text` of an entry is a glance, not the content: the event keeps everything. */
const TEXT_CAP = 400;

/** The longest prompt passed as an argument: Linux refuses a single argument over 128 KiB. */
export const ARG_PROMPT_LIMIT = 100 * 1024;

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** `text` capped to a glance, with an ellipsis when cut. */
export function brief(text: string, cap = TEXT_CAP): string {
  const flat = text.trim();
  return flat.length <= cap ? flat : `${flat.slice(0, cap - 1)}…`;
}

/** A tool call as one glance: its name and its input, compactly. */
export function toolSummary(name: string, input: unknown): string {
  if (input === undefined || input === null) return brief(name);
  const shown = typeof input === 'string' ? input : JSON.stringify(input);
  return brief(`${name} ${shown}`);
}

/** An entry, with `text` only when there is some. */
export function entry(kind: TranscriptKind, event: unknown, text?: string | null): TranscriptEntry {
  return text === undefined || text === null || text.trim() === '' ? { kind, event } : { kind, text: brief(text), event };
}

/** The refusal for a setting a CLI has no way to take. */
export function unsupported(agent: AgentName, setting: 'model' | 'effort' | 'mode'): HarnessRefusal {
  return new HarnessRefusal(`${agent} cannot take ${setting === 'effort' ? 'an effort' : `a ${setting}`} (its CLI has no flag for it): remove ${setting} from the profile or with_config`);
}

/**
 * The turn state every parser keeps. Subclasses read events; the state only ever moves forward:
 * the first session id stays, an end stays, an error stays (it wins over a normal ending).
 */
export abstract class EventParser implements TurnParser {
  #vendorId: string | null = null;
  #ended = false;
  #answer: string | null = null;
  #error: string | null = null;

  get vendorId(): string | null {
    return this.#vendorId;
  }
  get ended(): boolean {
    return this.#ended;
  }
  get answer(): string | null {
    return this.#answer;
  }
  get error(): string | null {
    return this.#error;
  }

  line(text: string): TranscriptEntry {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    // Banners, warnings and anything else a CLI prints between its events stay as they were.
    if (!isObject(parsed)) return entry('text', text, text);
    return this.event(parsed);
  }

  protected abstract event(event: JsonObject): TranscriptEntry;

  protected noteSession(id: unknown): void {
    if (this.#vendorId === null && typeof id === 'string' && id !== '') this.#vendorId = id;
  }
  protected noteEnd(): void {
    this.#ended = true;
  }
  protected noteAnswer(text: string | null): void {
    this.#answer = text;
  }
  protected noteError(message: string): void {
    this.#error ??= message.trim() === '' ? 'the agent reported an error without a message' : message;
  }
}
