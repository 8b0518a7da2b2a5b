/**
 * HermitAgent's task model over the harness: a task is an executor session. run_task spawns it,
 * reply_task resumes a waiting one with the answer, check_task reads its state back from the
 * turns' transcripts, cancel_task stops it. Nothing here holds a process: a waiting task is a
 * finished turn on disk, so it costs nothing while the orchestrator thinks.
 *
 * When a task's turn ends, the peer that started it is told (a `notifications/claude/channel`
 * message, for a client that declared it can take them): a question reaches the orchestrator
 * without polling.
 */
import { writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarnessAccess, SessionTurns } from '../harness/table.js';
import { HarnessRefusal } from '../harness/types.js';
import type { CallContext } from '../platform/call.js';
import { CHANNEL_CAPABILITY, type PeerNotice } from '../peers/notice.js';
import { readTurnOutcome, type TurnOutcome } from './outcome.js';
import type { CancelAnswer, TaskState } from './schemas.js';
import { UsageTable, type UsageRecord, type UsageSnapshot } from './usage.js';

export const DEFAULT_MAX_TURNS = 200;
const RESULT_HEAD = 2_000;
const RESULT_TAIL = 1_000;
/** A question or result quoted in a notice to another agent is capped at this. */
const NOTICE_TEXT_CAP = 2_000;
export interface RunTaskInput {
  task: string;
  cwd?: string;
  model?: string;
  max_turns?: number;
  profile?: string;
  wait?: boolean;
  timeout_seconds?: number;
}

export interface ReplyTaskInput {
  task_id: string;
  message: string;
  wait?: boolean;
  timeout_seconds?: number;
}

export interface TaskBoardOptions {
  harness: HarnessAccess;
  /** Where notices for peers go (the harness thread forwards them to the main thread). */
  notify?: (notice: PeerNotice) => void;
}

/** Keeps the head and the tail of a long text, saying how much was cut. */
export function headAndTail(text: string, head = RESULT_HEAD, tail = RESULT_TAIL): string {
  if (text.length <= head + tail) return text;
  return `${text.slice(0, head)}\n…[${text.length - head - tail} characters cut; check_task with full: true shows them]…\n${text.slice(-tail)}`;
}

function capped(text: string): string {
  return text.length <= NOTICE_TEXT_CAP ? text : `${text.slice(0, NOTICE_TEXT_CAP)}…`;
}

/** What the task capabilities may do with the board. */
export type TaskAccess = Pick<TaskBoard, 'run' | 'reply' | 'check' | 'checkAt' | 'cancel' | 'cancelTurn' | 'usageSnapshot'>;

export class TaskBoard {
  readonly #harness: HarnessAccess;
  readonly #notify: (notice: PeerNotice) => void;
  readonly usage = new UsageTable();
  /** Outcomes of finished turns (they never change), by `session:turn`. */
  readonly #outcomes = new Map<string, TurnOutcome>();

  constructor(options: TaskBoardOptions) {
    this.#harness = options.harness;
    this.#notify = options.notify ?? (() => undefined);
  }

  async run(input: RunTaskInput, caller: string | null, call: CallContext = {}): Promise<TaskState> {
    const profile = this.#executorProfile(input.profile);
    const launched = await this.#harness.spawn(
      {
        profile,
        prompt: input.task,
        ...(input.cwd === undefined ? {} : { cwd: input.cwd }),
        ...(input.model === undefined ? {} : { with_config: { model: input.model } }),
        args: ['--max-turns', String(input.max_turns ?? DEFAULT_MAX_TURNS)],
        ...(input.wait === undefined ? {} : { wait: input.wait }),
        ...(input.timeout_seconds === undefined ? {} : { timeout_seconds: input.timeout_seconds }),
      },
      call,
      caller,
    );
    return this.check({ task_id: launched.session });
  }

  async reply(input: ReplyTaskInput, call: CallContext = {}): Promise<TaskState> {
    const state = await this.check({ task_id: input.task_id });
    if (state.status !== 'waiting') {
      throw new HarnessRefusal(`task ${input.task_id} is ${state.status}, not waiting: reply_task answers a task's question only (check_task shows its state)`);
    }
    await this.#harness.send({
      session: input.task_id,
      prompt: input.message,
      ...(input.wait === undefined ? {} : { wait: input.wait }),
      ...(input.timeout_seconds === undefined ? {} : { timeout_seconds: input.timeout_seconds }),
    }, call);
    return this.check({ task_id: input.task_id });
  }

  async check(input: { task_id: string; full?: boolean }): Promise<TaskState> {
    return this.#state(this.#task(input.task_id), input.full === true);
  }

  /**
   * The task as it stood when its turn `turn` ended (or stands, while it runs): what run_task
   * answers for that turn, whatever turns came after (an MCP task names one turn).
   */
  async checkAt(input: { task_id: string; turn: number }): Promise<TaskState> {
    const view = this.#task(input.task_id);
    const turns = view.turns.filter((t) => t.turn <= input.turn);
    if (turns.at(-1)?.turn !== input.turn) throw new HarnessRefusal(`task ${input.task_id} has no turn ${input.turn}`, 'not_found');
    const latest = turns.length === view.turns.length;
    return this.#state({ ...view, turns, launching: latest && view.launching }, false, latest);
  }

  async #state(view: SessionTurns, full: boolean, latest = true): Promise<TaskState> {
    const outcomes = await Promise.all(view.turns.map((turn) => this.#outcome(view.session, turn)));
    const last = view.turns.at(-1) as SessionTurns['turns'][number];
    const lastOutcome = outcomes.at(-1) as TurnOutcome;
    const running = view.launching || last.status === 'running';
    const cancelled = !running && (last.status === 'killed' || (latest && (await this.#cancelledMark(view.session))));
    let status: TaskState['status'];
    let error: string | null = null;
    if (running) status = 'running';
    else if (cancelled) status = 'cancelled';
    else if (last.status === 'lost') {
      status = 'error';
      error = 'the server running the task stopped during its turn; the turn was lost (run the task again)';
    } else if (lastOutcome.state !== null) {
      status = lastOutcome.state;
      error = lastOutcome.error;
    } else {
      status = 'error';
      error = last.done?.error ?? 'the executor exited without reporting a result';
    }
    if (status !== 'error' && status !== 'max_turns' && status !== 'loop') error = null;
    else error ??= `the executor stopped: ${status}`;
    const answer = status === 'completed' ? (lastOutcome.answer ?? last.done?.answer ?? null) : null;
    const result = answer ?? (status === 'waiting' ? lastOutcome.question : error);
    const lastTool = [...outcomes].reverse().find((o) => o.lastTool !== null)?.lastTool ?? null;
    const gateway = this.usage.task(view.session);
    return {
      task_id: view.session,
      status,
      turns: outcomes.reduce((sum, o) => sum + o.requests, 0),
      ...(lastTool === null ? {} : { last_tool: lastTool }),
      ...(status === 'waiting' && lastOutcome.question !== null ? { question: lastOutcome.question, options: lastOutcome.options } : {}),
      token_totals: {
        prompt_tokens: outcomes.reduce((sum, o) => sum + o.usage.prompt_tokens, 0),
        completion_tokens: outcomes.reduce((sum, o) => sum + o.usage.completion_tokens, 0),
      },
      ...(result === null || running ? {} : { result: full ? result : headAndTail(result) }),
      ...(error === null ? {} : { error }),
      ...(gateway === null ? {} : { gateway }),
    };
  }

  async cancel(input: { task_id: string }): Promise<CancelAnswer> {
    const before = await this.check({ task_id: input.task_id });
    if (before.status !== 'running' && before.status !== 'waiting') return { task_id: input.task_id, status: before.status, was_running: false };
    const view = this.#task(input.task_id);
    if (view.launching) throw new HarnessRefusal(`task ${input.task_id} has a turn starting; cancel it once it runs (check_task shows it)`);
    // Marked first: the turn's end (and its notice) already reads as cancelled.
    await writeFile(join(this.#harness.sessionDir(input.task_id), 'task.json'), `${JSON.stringify({ cancelled_at: new Date().toISOString() })}\n`, { mode: 0o600 });
    // That turn only: a turn that ended meanwhile is left as it is, and the session is never reaped.
    const last = view.turns.at(-1) as SessionTurns['turns'][number];
    if (before.status === 'running') await this.#harness.stopTurn({ session: input.task_id, turn: last.turn });
    return { task_id: input.task_id, status: 'cancelled', was_running: before.status === 'running' };
  }

  /**
   * Cancels the task's turn `turn` if it still runs (an MCP task names one turn): marked
   * cancelled, then stopped. A turn that has ended, or a later one, is left alone; answers
   * whether it stopped one.
   */
  async cancelTurn(input: { task_id: string; turn: number }): Promise<boolean> {
    const view = this.#task(input.task_id);
    if (view.turns.find((t) => t.turn === input.turn)?.status !== 'running') return false;
    await writeFile(join(this.#harness.sessionDir(input.task_id), 'task.json'), `${JSON.stringify({ cancelled_at: new Date().toISOString() })}\n`, { mode: 0o600 });
    return this.#harness.stopTurn({ session: input.task_id, turn: input.turn });
  }

  recordUsage(record: UsageRecord): void {
    this.usage.record(record);
  }

  usageSnapshot(): UsageSnapshot {
    return this.usage.snapshot();
  }

  /** The harness's turn-end hook: tells the peer that started an executor task how its turn ended. */
  async turnEnded(session: string): Promise<void> {
    let view: SessionTurns;
    try {
      view = this.#harness.turnsOf(session);
    } catch {
      return; // reaped meanwhile
    }
    if (view.agent !== 'executor' || view.spawnedBy === null) return;
    const state = await this.check({ task_id: session });
    if (state.status === 'running') return;
    const content =
      state.status === 'waiting'
        ? [
            `majordomus task ${session} asks (the executor's words, quoted): ${JSON.stringify(capped(state.question ?? ''))}`,
            ...(state.options && state.options.length > 0 ? [`options: ${state.options.map((o) => JSON.stringify(capped(o))).join(' | ')}`] : []),
            `Answer with reply_task {task_id: "${session}", message}.`,
          ].join('\n')
        : `majordomus task ${session} ended: ${state.status}. ${state.status === 'completed' ? 'Its answer' : 'Why'} (quoted): ${JSON.stringify(capped(state.result ?? ''))}\ncheck_task {task_id: "${session}"} shows the whole state.`;
    this.#notify({
      peer: view.spawnedBy,
      method: 'notifications/claude/channel',
      params: { content, meta: { task_id: session, status: state.status } },
      requires: CHANNEL_CAPABILITY,
    });
  }

  #task(id: string): SessionTurns {
    let view: SessionTurns;
    try {
      view = this.#harness.turnsOf(id);
    } catch {
      throw new HarnessRefusal(`no task ${id}: run_task answers a task_id (session_list shows every session)`);
    }
    if (view.agent !== 'executor') throw new HarnessRefusal(`session ${id} runs ${view.agent}, not the executor: it is not a task (use the session tools)`);
    return view;
  }

  async #outcome(session: string, turn: SessionTurns['turns'][number]): Promise<TurnOutcome> {
    const key = `${session}:${turn.turn}`;
    const known = this.#outcomes.get(key);
    if (known) return known;
    const outcome = await readTurnOutcome(turn.transcript);
    if (turn.status !== 'running') this.#outcomes.set(key, outcome);
    return outcome;
  }

  async #cancelledMark(session: string): Promise<boolean> {
    try {
      await readFile(join(this.#harness.sessionDir(session), 'task.json'), 'utf8');
      return true;
    } catch {
      return false;
    }
  }

  /** The profile a task runs with: the one asked for, else the default, else the first nominated executor profile. */
  #executorProfile(requested: string | undefined): string {
    const executors = this.#harness.listProfiles().profiles.filter((p) => p.agent === 'executor');
    if (requested !== undefined) {
      const profile = executors.find((p) => p.id === requested);
      if (profile === undefined) throw new HarnessRefusal(`no nominated executor profile "${requested}"; nominated executor profiles: ${executors.map((p) => p.id).join(', ') || 'none'}`);
      return profile.id;
    }
    const usable = executors.filter((p) => p.error === undefined);
    const chosen = usable.find((p) => p.isDefault) ?? usable[0];
    if (chosen === undefined) {
      throw new HarnessRefusal(
        executors.length === 0
          ? 'no executor profile is nominated: add .ai/profiles/executor.yaml with `agent: executor` and `harness: {enabled: true}` (docs/DELEGATION.md)'
          : `no executor profile can start: ${executors.map((p) => `${p.id}: ${p.error}`).join('; ')}`,
      );
    }
    return chosen.id;
  }
}
