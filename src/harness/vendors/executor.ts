/**
 * The executor: majordomus's own agent, `majordomus exec` (SPEC §9, EXECUTOR.md), run as
 * `node <package>/dist/src/cli/main.js exec --json [--resume ID] [--model M] [--mode M] …` with
 * the task on stdin. It has no effort setting of its own (the gateway's routing picks one).
 *
 * Its events — this module defines them, `majordomus exec` prints them — are one JSON object a line:
 *
 * - `{"type":"session","id":"…"}` first: the id a later turn resumes with `--resume`;
 * - `{"type":"message","role":"assistant","text":"…"}` (and role "user" for what it was told);
 * - `{"type":"tool_call","name":"…","input":{…}}`;
 * - `{"type":"tool_result","name":"…","ok":true,"output":"…","refused"?:"why"}` (`refused`: the
 *   permission floor stopped the tool);
 * - `{"type":"route","provider":"…","model":"…","failovers":[{"provider","model","reason"}]}` when
 *   the gateway failed over before a provider answered;
 * - `{"type":"result","status":"completed|waiting|max_turns|loop|error|cancelled","answer"?,
 *   "question"?,"options"?,"error"?,"usage"?,"requests"?}` last: every turn ends with one, naming an
 *   honest state; `usage` sums what the model endpoint reported, `requests` counts model requests.
 *
 * The answer is `answer` (or, when waiting, the `question` the orchestrator must reply to), else
 * the last assistant message. Every state but completed and waiting is an error: the turn did not
 * finish its task, and it says so.
 */
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../platform/package-root.js';
import type { Invocation, LaunchShape, TranscriptEntry, TurnParser, VendorAdapter } from './adapter.js';
import { SETTLED_STATES } from '../../executor/events.js';
import { entry, EventParser, stringOf, toolSummary, unsupported, type JsonObject } from './events.js';


class ExecutorParser extends EventParser {
  protected event(event: JsonObject): TranscriptEntry {
    switch (event.type) {
      case 'session':
        this.noteSession(event.id);
        return entry('system', event, 'session started');
      case 'message': {
        const text = stringOf(event.text);
        if (event.role !== 'assistant') return entry('user', event, text);
        if (text !== null && text !== '') this.noteAnswer(text);
        return entry('assistant', event, text);
      }
      case 'tool_call':
        return entry('tool_use', event, toolSummary(stringOf(event.name) ?? 'tool', event.input));
      case 'tool_result':
        return entry('tool_result', event, `${stringOf(event.name) ?? 'tool'}${stringOf(event.refused) !== null ? ' refused' : event.ok === false ? ' failed' : ''}: ${stringOf(event.output) ?? ''}`);
      case 'route':
        return entry('system', event, routeSummary(event));
      case 'result':
        return this.#result(event);
      default:
        return entry('other', event);
    }
  }

  #result(event: JsonObject): TranscriptEntry {
    this.noteEnd();
    const status = stringOf(event.status) ?? 'unknown';
    const answer = stringOf(event.answer) ?? (status === 'waiting' ? stringOf(event.question) : null);
    if (answer !== null) this.noteAnswer(answer);
    if ((SETTLED_STATES as readonly string[]).includes(status)) return entry('result', event, status === 'waiting' ? `waiting: ${answer ?? ''}` : answer);
    const message = stringOf(event.error) ?? `the executor stopped: ${status}`;
    this.noteError(message);
    return entry('error', event, message);
  }
}

function routeSummary(event: JsonObject): string {
  const failovers = Array.isArray(event.failovers) ? event.failovers : [];
  const tried = failovers
    .map((f) => (typeof f === 'object' && f !== null ? `${stringOf((f as JsonObject).provider) ?? '?'}/${stringOf((f as JsonObject).model) ?? '?'} (${stringOf((f as JsonObject).reason) ?? '?'})` : '?'))
    .join(', ');
  return `model ${stringOf(event.provider) ?? '?'}/${stringOf(event.model) ?? '?'}${tried === '' ? '' : ` after failing over from ${tried}`}`;
}

function invocation(shape: LaunchShape, resumeId: string | null): Invocation {
  if (shape.effort !== undefined) throw unsupported('executor', 'effort');
  const args = ['exec', '--json'];
  const hidden: number[] = [];
  if (resumeId !== null) {
    args.push('--resume', resumeId);
    hidden.push(args.length - 1);
  }
  if (shape.model !== undefined) args.push('--model', shape.model);
  if (shape.mode !== undefined) args.push('--mode', shape.mode);
  args.push(...shape.args);
  return { args, stdin: shape.prompt, hidden };
}

export const executor: VendorAdapter = {
  agent: 'executor',
  // --mode: read-only leaves write_file, edit_file and bash out.
  modes: ['read-only', 'default'],
  defaultMode: 'default',
  // This very package, run by the Node that runs the server: no install or PATH needed.
  defaultCommand: process.execPath,
  defaultCommandArgs: [join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js')],
  invocation,
  turnParser: (): TurnParser => new ExecutorParser(),
};
