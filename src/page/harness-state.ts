/**
 * The live page's harness part, built in the harness thread where the session table lives: the
 * latest sessions with the tail of their transcripts, and the executor tasks with their state and
 * token totals. Built only when the HTTP thread asks (something changed and a page is open).
 */
import { errorMessage } from '../platform/errors.js';
import type { HarnessAccess } from '../harness/table.js';
import type { TaskAccess } from '../tasks/board.js';
import { PAGE_LIMITS, tailLine, type PageHarnessState, type PageSession, type PageTask } from './state.js';

export async function pageHarnessState(harness: Pick<HarnessAccess, 'list' | 'read'>, tasks: Pick<TaskAccess, 'check'>): Promise<PageHarnessState> {
  const rows = harness.list().sessions.slice(0, PAGE_LIMITS.sessions);
  const sessions = await Promise.all(
    rows.map(async (row): Promise<PageSession> => {
      let tail: string[];
      try {
        tail = (await harness.read({ session: row.session, tail: PAGE_LIMITS.tailLines })).lines.map(tailLine);
      } catch (error) {
        tail = [`(the transcript cannot be read: ${errorMessage(error)})`]; // reaped meanwhile
      }
      return { ...row, tail };
    }),
  );
  const executors = rows.filter((row) => row.agent === 'executor').slice(0, PAGE_LIMITS.tasks);
  const checked = await Promise.all(
    executors.map(async (row): Promise<PageTask | null> => {
      try {
        const state = await tasks.check({ task_id: row.session });
        return {
          task_id: state.task_id,
          status: state.status,
          turns: state.turns,
          ...(state.last_tool === undefined ? {} : { last_tool: String(state.last_tool) }),
          prompt_tokens: state.token_totals.prompt_tokens,
          completion_tokens: state.token_totals.completion_tokens,
          ...(state.question === undefined ? {} : { question: state.question }),
          ...(state.error === undefined ? {} : { error: state.error }),
        };
      } catch {
        return null; // reaped meanwhile
      }
    }),
  );
  return { sessions, tasks: checked.filter((task): task is PageTask => task !== null) };
}
