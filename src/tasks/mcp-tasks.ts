/**
 * The MCP tasks (protocol 2025-11-25) of the calls that start a turn — spawn, session_send and
 * run_task: each task names the one turn its call started (src/harness/turn-task.ts), takes its
 * status from that turn, and its result is what the synchronous call answers for that turn,
 * read once the turn has ended. Cancelling one stops that turn, never the session. What a task
 * is to a client (its TTL, how often to poll, `tasks/*`) is the MCP projection's (src/mcp/tasks.ts).
 */
import type { HarnessAccess, TurnTaskState } from '../harness/table.js';
import { isTerminal, parseTurnTaskId } from '../harness/turn-task.js';
import type { TaskAccess } from './board.js';

/** What the call that created the task answers: spawn's, session_send's or run_task's shape. */
export type TaskAnswerShape = 'spawn' | 'send' | 'task';

export interface McpTaskAnswer {
  task: TurnTaskState;
  /** The call's answer for the turn, once it ended (when asked for). */
  result?: unknown;
}

export interface McpTaskQuery {
  task: string;
  shape: TaskAnswerShape;
  /** Include the result once the task is terminal. */
  result: boolean;
  /** Wait this long for the turn to end first (the caller's signal stops the wait). */
  waitSeconds?: number;
}

/** A task's state, and its result once its turn has ended. */
export async function mcpTaskState(harness: HarnessAccess, tasks: TaskAccess, query: McpTaskQuery, signal?: AbortSignal): Promise<McpTaskAnswer> {
  const named = parseTurnTaskId(query.task);
  if (query.waitSeconds !== undefined) await harness.untilTurnEnds(named, Date.now() + query.waitSeconds * 1000, signal);
  const task = harness.turnTask(named);
  if (!isTerminal(task.status)) return { task };
  if (query.shape === 'task') {
    // An executor's turn ends answering, asking or failing: the message says which.
    const state = await tasks.checkAt({ task_id: named.session, turn: named.turn });
    const told = { ...task, statusMessage: `${task.statusMessage}: task ${state.status}` };
    return query.result ? { task: told, result: state } : { task: told };
  }
  return query.result ? { task, result: await harness.turnAnswer(named, query.shape === 'send') } : { task };
}

/**
 * Stops the task's turn if it still runs (a run_task's task is marked cancelled first); answers
 * the task as it is now and whether it stopped it. A finished task is left as it is.
 */
export async function cancelMcpTask(harness: HarnessAccess, tasks: TaskAccess, query: { task: string; shape: TaskAnswerShape }): Promise<{ task: TurnTaskState; stopped: boolean }> {
  const named = parseTurnTaskId(query.task);
  if (isTerminal(harness.turnTask(named).status)) return { task: harness.turnTask(named), stopped: false };
  const stopped = query.shape === 'task' ? await tasks.cancelTurn({ task_id: named.session, turn: named.turn }) : await harness.stopTurn(named);
  return { task: harness.turnTask(named), stopped };
}
