/**
 * Codex (`@openai/codex`): `codex exec --json … -C CWD --skip-git-repo-check -- PROMPT`, and
 * `… resume -- ID PROMPT` for a later turn.
 *
 * The prompt is the positional argument after `--`, so one that starts with a dash or reads
 * `resume` / `review` stays a prompt; stdin is then closed at once (with a piped stdin codex
 * reads it to the end and appends it). A prompt too long for one argument (Linux refuses an
 * argument over 128 KiB) is `-` instead and goes on stdin. Options of `exec` (`-C`, `--sandbox`,
 * profile args) go before `resume`: `exec resume` has no `-C` or `--sandbox` of its own, but
 * honours the parent's.
 *
 * Events: `thread.started` (`thread_id`), `turn.started`, `item.started` / `item.completed`
 * (`item.type` agent_message, reasoning, command_execution, file_change, mcp_tool_call, …),
 * `turn.completed` (`usage`) or `turn.failed` (`error.message`), and top-level `error` events.
 * Seen on the real CLI: `item.completed` with `item.type` "error" are warnings (an unknown model's
 * metadata, a model switch on resume) and the turn goes on; a top-level `error` is also printed
 * for each retry ("Reconnecting... 1/5 …") that a later attempt may recover from.
 */
import type { Invocation, LaunchShape, TranscriptEntry, TurnParser, VendorAdapter } from './adapter.js';
import { ARG_PROMPT_LIMIT, entry, EventParser, isObject, stringOf, toolSummary, type JsonObject } from './events.js';

const RETRY_NOTICE = /^Reconnecting\.\.\. \d+\/\d+/;

class CodexParser extends EventParser {
  #lastNotice: string | null = null;

  /** turn.failed or a non-retry `error`; a retry notice counts only if the turn never ended. */
  override get error(): string | null {
    return super.error ?? (this.ended ? null : this.#lastNotice);
  }

  protected event(event: JsonObject): TranscriptEntry {
    switch (event.type) {
      case 'thread.started':
        this.noteSession(event.thread_id);
        return entry('system', event, 'thread started');
      case 'turn.started':
        return entry('system', event, 'turn started');
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        return this.#item(event);
      case 'turn.completed':
        this.noteEnd();
        return entry('result', event, 'turn completed');
      case 'turn.failed': {
        const message = (isObject(event.error) ? stringOf(event.error.message) : null) ?? this.#lastNotice ?? 'turn failed';
        this.noteError(message);
        this.noteEnd();
        return entry('error', event, message);
      }
      case 'error': {
        const message = stringOf(event.message) ?? 'codex reported an error';
        if (RETRY_NOTICE.test(message)) this.#lastNotice = message;
        else this.noteError(message);
        return entry('error', event, message);
      }
      default:
        return entry('other', event);
    }
  }

  #item(event: JsonObject): TranscriptEntry {
    const item = isObject(event.item) ? event.item : {};
    const completed = event.type === 'item.completed';
    switch (item.type) {
      case 'agent_message': {
        const text = stringOf(item.text);
        if (completed && text !== null) this.noteAnswer(text);
        return entry('assistant', event, text);
      }
      case 'reasoning':
        return entry('other', event, stringOf(item.text));
      case 'command_execution': {
        const command = stringOf(item.command) ?? '';
        if (!completed) return entry('tool_use', event, `$ ${command}`);
        const exit = typeof item.exit_code === 'number' ? `exit ${item.exit_code}` : stringOf(item.status) ?? '';
        return entry('tool_result', event, `${exit}: ${stringOf(item.aggregated_output) ?? ''}`);
      }
      case 'file_change': {
        const paths = Array.isArray(item.changes) ? item.changes.map((c) => (isObject(c) ? (stringOf(c.path) ?? '') : '')).join(', ') : '';
        return entry(completed ? 'tool_result' : 'tool_use', event, `${stringOf(item.status) ?? 'changes'}: ${paths}`);
      }
      case 'mcp_tool_call': {
        const name = `${stringOf(item.server) ?? ''}.${stringOf(item.tool) ?? ''}`;
        return completed ? entry('tool_result', event, `${name}: ${stringOf(item.status) ?? ''}`) : entry('tool_use', event, toolSummary(name, item.arguments));
      }
      case 'web_search':
        return entry('tool_use', event, `web search ${stringOf(item.query) ?? ''}`);
      case 'error':
        return entry('system', event, `warning: ${stringOf(item.message) ?? ''}`);
      default:
        return entry('other', event);
    }
  }
}

function invocation(shape: LaunchShape, resumeId: string | null): Invocation {
  const args = ['exec', '--json'];
  if (shape.model !== undefined) args.push('--model', shape.model);
  // Codex takes any effort string (it passes it on to the model API): nothing to check here.
  if (shape.effort !== undefined) args.push('--config', `model_reasoning_effort=${JSON.stringify(shape.effort)}`);
  if (shape.mode !== undefined) args.push('--sandbox', shape.mode);
  args.push('-C', shape.cwd, '--skip-git-repo-check', ...shape.args);
  const hidden: number[] = [];
  if (resumeId === null) {
    args.push('--');
  } else {
    args.push('resume', '--', resumeId);
    hidden.push(args.length - 1);
  }
  if (Buffer.byteLength(shape.prompt) > ARG_PROMPT_LIMIT) {
    args.push('-');
    return { args, stdin: shape.prompt, hidden };
  }
  args.push(shape.prompt);
  hidden.push(args.length - 1);
  return { args, stdin: null, hidden };
}

export const codex: VendorAdapter = {
  agent: 'codex',
  // --sandbox, from read-only to no sandbox at all.
  modes: ['read-only', 'workspace-write', 'danger-full-access'],
  defaultMode: 'workspace-write',
  defaultCommand: 'codex',
  // A `-c key=value` override may set a provider's bearer token or headers.
  secretFlags: ['-c', '--config'],
  invocation,
  turnParser: (): TurnParser => new CodexParser(),
};
