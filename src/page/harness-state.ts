/**
 * The live page's harness part, built in the harness thread where the session table lives: the
 * latest sessions with the tail of their transcripts, the executor tasks with their state, token
 * totals and cost, and the gateway's usage by provider and by caller. Built only when the HTTP
 * thread asks (something changed and a page is open).
 */
import { errorMessage } from '../platform/errors.js';
import type { HarnessAccess } from '../harness/table.js';
import type { TaskAccess } from '../tasks/board.js';
import type { UsageCounts, UsageSnapshot } from '../tasks/usage.js';
import { PAGE_LIMITS, tailLine, type PageHarnessState, type PageSession, type PageTask, type PageUsage, type PageUsageRow } from './state.js';

function usageRow(name: string, counts: UsageCounts): PageUsageRow {
  const { requests, failed, prompt_tokens, completion_tokens, cost, priced_requests, saved } = counts;
  return {
    name,
    requests,
    failed,
    prompt_tokens,
    completion_tokens,
    ...(cost === undefined ? {} : { cost }),
    ...(priced_requests === undefined ? {} : { priced_requests }),
    ...(saved === undefined ? {} : { saved }),
  };
}

/** The rows of `counts`, the busiest first, bounded. */
function usageRows(counts: Record<string, UsageCounts>): PageUsageRow[] {
  return Object.entries(counts)
    .map(([name, row]) => usageRow(name, row))
    .sort((a, b) => b.requests - a.requests || a.name.localeCompare(b.name))
    .slice(0, PAGE_LIMITS.usageRows);
}

export function pageUsage(snapshot: UsageSnapshot): PageUsage {
  return {
    since: snapshot.since,
    currency: snapshot.currency,
    reference: snapshot.reference,
    total: usageRow('total', snapshot.total),
    providers: usageRows(snapshot.providers),
    keys: usageRows(snapshot.keys),
  };
}

export async function pageHarnessState(harness: Pick<HarnessAccess, 'list' | 'read'>, tasks: Pick<TaskAccess, 'check' | 'usageSnapshot'>): Promise<PageHarnessState> {
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
        const cost = state.gateway?.cost;
        return {
          task_id: state.task_id,
          status: state.status,
          turns: state.turns,
          ...(state.last_tool === undefined ? {} : { last_tool: String(state.last_tool) }),
          prompt_tokens: state.token_totals.prompt_tokens,
          completion_tokens: state.token_totals.completion_tokens,
          ...(state.question === undefined ? {} : { question: state.question }),
          ...(state.error === undefined ? {} : { error: state.error }),
          ...(cost === undefined ? {} : { cost }),
        };
      } catch {
        return null; // reaped meanwhile
      }
    }),
  );
  return { sessions, tasks: checked.filter((task): task is PageTask => task !== null), usage: pageUsage(tasks.usageSnapshot()) };
}
