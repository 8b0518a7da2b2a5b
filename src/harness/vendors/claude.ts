/**
 * Claude Code (`@anthropic-ai/claude-code`): `claude -p --output-format stream-json --verbose`.
 *
 * The prompt goes on stdin: claude's variadic flags (`--allowedTools A B`, `--add-dir …`,
 * `--mcp-config …`) would swallow a positional prompt that follows profile args. Events: a
 * `system`/`init` carrying `session_id`, `assistant` and `user` messages (content blocks text,
 * tool_use, tool_result), and one closing `result` (`result`, `is_error`, `subtype`, `errors`).
 */
import { HarnessRefusal } from '../types.js';
import type { Invocation, LaunchShape, TranscriptEntry, TurnParser, VendorAdapter } from './adapter.js';
import { entry, EventParser, isObject, stringOf, toolSummary, type JsonObject } from './events.js';

/** `--effort` values; claude ignores any other with only a warning, so they are refused here. */
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];

class ClaudeParser extends EventParser {
  protected event(event: JsonObject): TranscriptEntry {
    this.noteSession(event.session_id);
    switch (event.type) {
      case 'system':
        return entry('system', event, event.subtype === 'init' ? `session started${typeof event.model === 'string' ? ` (model ${event.model})` : ''}` : stringOf(event.subtype));
      case 'assistant':
        return this.#assistant(event);
      case 'user':
        return user(event);
      case 'result':
        return this.#result(event);
      default:
        return entry('other', event);
    }
  }

  #assistant(event: JsonObject): TranscriptEntry {
    const blocks = contentOf(event);
    const text = blocks.filter((b) => b.type === 'text').map((b) => stringOf(b.text) ?? '').join('');
    // Messages of a subagent (parent_tool_use_id set) are its own work, not this turn's answer.
    if (text !== '' && (event.parent_tool_use_id ?? null) === null) this.noteAnswer(text);
    if (text !== '') return entry('assistant', event, text);
    const tools = blocks.filter((b) => b.type === 'tool_use');
    if (tools.length > 0) return entry('tool_use', event, tools.map((b) => toolSummary(stringOf(b.name) ?? 'tool', b.input)).join('; '));
    return entry('assistant', event);
  }

  #result(event: JsonObject): TranscriptEntry {
    this.noteEnd();
    const result = stringOf(event.result);
    const subtype = stringOf(event.subtype) ?? '';
    if (event.is_error === true || subtype.startsWith('error')) {
      const errors = Array.isArray(event.errors) ? event.errors.filter((e): e is string => typeof e === 'string') : [];
      const message = result !== null && result.trim() !== '' ? result : errors.length > 0 ? errors.join('; ') : `claude ended the turn with ${subtype === '' ? 'an error' : subtype}`;
      this.noteError(message);
      return entry('error', event, message);
    }
    if (result !== null) this.noteAnswer(result);
    return entry('result', event, result);
  }
}

function contentOf(event: JsonObject): JsonObject[] {
  const message = event.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  return message.content.filter(isObject);
}

function user(event: JsonObject): TranscriptEntry {
  const results = contentOf(event).filter((b) => b.type === 'tool_result');
  if (results.length === 0) return entry('user', event, contentOf(event).map((b) => stringOf(b.text) ?? '').join(''));
  return entry('tool_result', event, results.map((b) => `${b.is_error === true ? 'error: ' : ''}${resultText(b.content)}`).join('; '));
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) ? (stringOf(part.text) ?? '') : '')).join('');
}

function invocation(shape: LaunchShape, resumeId: string | null): Invocation {
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  const hidden: number[] = [];
  if (resumeId !== null) {
    args.push('--resume', resumeId);
    hidden.push(args.length - 1);
  }
  if (shape.model !== undefined) args.push('--model', shape.model);
  if (shape.effort !== undefined) {
    if (!EFFORTS.includes(shape.effort)) throw new HarnessRefusal(`claude takes effort ${EFFORTS.join(', ')}, not "${shape.effort}": fix effort in the profile or with_config`);
    args.push('--effort', shape.effort);
  }
  if (shape.mode !== undefined) args.push('--permission-mode', shape.mode);
  args.push(...shape.args);
  return { args, stdin: shape.prompt, hidden };
}

export const claude: VendorAdapter = {
  agent: 'claude',
  // --permission-mode: plan only reads; dontAsk runs only what is pre-approved; acceptEdits adds file edits; bypassPermissions asks for nothing.
  modes: ['plan', 'dontAsk', 'default', 'acceptEdits', 'bypassPermissions'],
  defaultMode: 'default',
  defaultCommand: 'claude',
  // Inline JSON for these may carry API keys, MCP headers or env.
  secretFlags: ['--settings', '--mcp-config'],
  invocation,
  turnParser: (): TurnParser => new ClaudeParser(),
};
