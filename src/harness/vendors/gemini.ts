/**
 * Gemini CLI (`@google/gemini-cli`): `gemini --output-format stream-json --skip-trust [-m M]
 * [--resume ID] [--approval-mode MODE] … --prompt=PROMPT`.
 *
 * The prompt is written `--prompt=PROMPT` in one argument: as `-p PROMPT`, a prompt starting
 * with a dash ("- fix the test") is read as flags and the CLI stops with "Not enough arguments".
 * `--skip-trust` trusts the checkout for this run only: headless gemini 0.61 exits 55 in a folder
 * nobody trusted interactively, and the profile's nomination (harness.enabled) is the consent, as
 * codex's --skip-git-repo-check. The CLI has no effort flag. Name a model: the default "auto"
 * first asks a router model.
 *
 * Events: `init` (`session_id`, `model`), `message` (role user, or assistant pieces with
 * `delta: true`), `tool_use`, `tool_result`, `error` (`severity` warning or error) and one closing
 * `result` (`status` success / error, `error.message`, `stats`).
 */
import { HarnessRefusal } from '../types.js';
import type { Invocation, LaunchShape, TranscriptEntry, TurnParser, VendorAdapter } from './adapter.js';
import { ARG_PROMPT_LIMIT, entry, EventParser, isObject, stringOf, toolSummary, unsupported, type JsonObject } from './events.js';

class GeminiParser extends EventParser {
  /** The assistant's text since the last tool call, and the last stretch before it (the CLI's own rule). */
  #current = '';
  #before = '';

  protected event(event: JsonObject): TranscriptEntry {
    switch (event.type) {
      case 'init':
        this.noteSession(event.session_id);
        return entry('system', event, `session started${typeof event.model === 'string' ? ` (model ${event.model})` : ''}`);
      case 'message': {
        const content = stringOf(event.content) ?? '';
        if (event.role !== 'assistant') return entry('user', event, content);
        this.#current += content;
        this.noteAnswer(this.#current !== '' ? this.#current : this.#before !== '' ? this.#before : null);
        return entry('assistant', event, content);
      }
      case 'tool_use':
        if (this.#current !== '') this.#before = this.#current;
        this.#current = '';
        return entry('tool_use', event, toolSummary(stringOf(event.tool_name) ?? 'tool', event.parameters));
      case 'tool_result': {
        const failure = isObject(event.error) ? stringOf(event.error.message) : null;
        return entry('tool_result', event, failure !== null ? `error: ${failure}` : (stringOf(event.output) ?? stringOf(event.status)));
      }
      case 'error': {
        const message = stringOf(event.message) ?? 'gemini reported an error';
        // Warnings (a loop detected, a blocked response) do not end the turn.
        if (event.severity === 'error') this.noteError(message);
        return entry('error', event, message);
      }
      case 'result':
        return this.#result(event);
      default:
        return entry('other', event);
    }
  }

  #result(event: JsonObject): TranscriptEntry {
    this.noteEnd();
    if (event.status === 'error') {
      const message = (isObject(event.error) ? stringOf(event.error.message) : null) ?? 'gemini ended the turn with an error';
      this.noteError(message);
      return entry('error', event, message);
    }
    return entry('result', event, stringOf(event.status));
  }
}

function invocation(shape: LaunchShape, resumeId: string | null): Invocation {
  if (shape.effort !== undefined) throw unsupported('gemini', 'effort');
  if (Buffer.byteLength(shape.prompt) > ARG_PROMPT_LIMIT) {
    throw new HarnessRefusal(`gemini takes its prompt as one argument, at most ${ARG_PROMPT_LIMIT} bytes; this one has ${Buffer.byteLength(shape.prompt)}: shorten it, or use a profile of another agent`);
  }
  const args = ['--output-format', 'stream-json', '--skip-trust'];
  const hidden: number[] = [];
  if (shape.model !== undefined) args.push('--model', shape.model);
  if (resumeId !== null) {
    args.push('--resume', resumeId);
    hidden.push(args.length - 1);
  }
  if (shape.mode !== undefined) args.push('--approval-mode', shape.mode);
  args.push(...shape.args, `--prompt=${shape.prompt}`);
  hidden.push(args.length - 1);
  return { args, stdin: null, hidden };
}

export const gemini: VendorAdapter = {
  agent: 'gemini',
  // --approval-mode, from planning only to approving everything.
  modes: ['plan', 'default', 'auto_edit', 'yolo'],
  defaultMode: 'default',
  defaultCommand: 'gemini',
  invocation,
  turnParser: (): TurnParser => new GeminiParser(),
};
