/**
 * opencode (`opencode-ai`): `opencode run --format json [--session ID] [--model P/M]
 * [--variant E] [--agent MODE] …`, the prompt on stdin.
 *
 * Not a positional message: `opencode run` joins its message arguments and wraps each one that
 * holds a space in double quotes (escaping the quotes inside), so the model would read a changed
 * prompt (opencode 1.18.33 sent `say "hi" twice` to the model as `"say \"hi\" twice"`). With no
 * message argument it takes stdin as the message, exactly. Effort is the model
 * variant (`--variant`, provider-specific: high, max, minimal, …); mode is the primary agent
 * (`--agent`: build, plan, or one the project defines).
 *
 * Events: `{type, timestamp, sessionID, part}` with type `step_start`, `text` (`part.text`),
 * `tool_use` (`part.tool`, `part.state`), `reasoning`, `step_finish` (`part.reason`,
 * `part.tokens`), and `{type: "error", error: {name, data.message}}`. There is no event for the
 * end of the turn: `ended` stays false and the process's exit ends the turn.
 */
import type { Invocation, LaunchShape, TranscriptEntry, TurnParser, VendorAdapter } from './adapter.js';
import { entry, EventParser, isObject, stringOf, toolSummary, type JsonObject } from './events.js';

class OpencodeParser extends EventParser {
  #texts: string[] = [];

  protected event(event: JsonObject): TranscriptEntry {
    this.noteSession(event.sessionID);
    const part = isObject(event.part) ? event.part : {};
    switch (event.type) {
      case 'text': {
        const text = stringOf(part.text) ?? '';
        if (text !== '') this.#texts.push(text);
        this.noteAnswer(this.#texts.length === 0 ? null : this.#texts.join('\n'));
        return entry('assistant', event, text);
      }
      case 'tool_use': {
        const state = isObject(part.state) ? part.state : {};
        const name = stringOf(part.tool) ?? 'tool';
        const failure = stringOf(state.error);
        return entry('tool_use', event, failure !== null ? `${name}: error: ${failure}` : toolSummary(name, state.input));
      }
      case 'step_start':
        return entry('system', event, 'step started');
      case 'step_finish':
        return entry('system', event, `step finished${typeof part.reason === 'string' ? ` (${part.reason})` : ''}`);
      case 'reasoning':
        return entry('other', event, stringOf(part.text));
      case 'error': {
        const error = isObject(event.error) ? event.error : {};
        const data = isObject(error.data) ? error.data : {};
        const message = stringOf(data.message) ?? stringOf(error.name) ?? 'opencode reported an error';
        this.noteError(message);
        return entry('error', event, message);
      }
      default:
        return entry('other', event);
    }
  }
}

function invocation(shape: LaunchShape, resumeId: string | null): Invocation {
  const args = ['run', '--format', 'json'];
  const hidden: number[] = [];
  if (resumeId !== null) {
    args.push('--session', resumeId);
    hidden.push(args.length - 1);
  }
  if (shape.model !== undefined) args.push('--model', shape.model);
  if (shape.effort !== undefined) args.push('--variant', shape.effort);
  if (shape.mode !== undefined) args.push('--agent', shape.mode);
  args.push(...shape.args);
  return { args, stdin: shape.prompt, hidden };
}

export const opencode: VendorAdapter = {
  agent: 'opencode',
  // --agent: its built-in plan agent cannot edit, build can; a custom agent only through allowed_modes.
  modes: ['plan', 'build'],
  defaultMode: 'build',
  defaultCommand: 'opencode',
  // `-p` is `--password` (basic auth of an attached server); the general rule misses the short form.
  secretFlags: ['-p'],
  invocation,
  turnParser: (): TurnParser => new OpencodeParser(),
};
