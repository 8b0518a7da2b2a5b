/**
 * The gateway's usage, counted where the tasks live (the harness thread): every model request the
 * gateway forwarded, by provider and by task. The HTTP thread reports each request once it ended;
 * `GET /api/v1/usage` and check_task read the counts. Kept in memory: a new server starts at zero
 * (a task's own totals, which its executor reports, survive in its transcript).
 */

import type { UsageRecord } from '../gateway/usage.js';

export type { UsageRecord };

export interface UsageCounts {
  requests: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  failovers: number;
}

export interface TaskUsage extends UsageCounts {
  by_provider: Record<string, UsageCounts>;
}

export interface UsageSnapshot {
  since: string;
  providers: Record<string, UsageCounts>;
  tasks: Record<string, TaskUsage>;
}

/** Tasks counted at most; the least recently used one is forgotten past it. */
const MAX_TASKS = 1024;

function zero(): UsageCounts {
  return { requests: 0, failed: 0, prompt_tokens: 0, completion_tokens: 0, failovers: 0 };
}

function add(counts: UsageCounts, record: UsageRecord): void {
  counts.requests += 1;
  if (!record.ok) counts.failed += 1;
  counts.prompt_tokens += record.prompt_tokens;
  counts.completion_tokens += record.completion_tokens;
  counts.failovers += record.failovers;
}

export class UsageTable {
  readonly #since = new Date().toISOString();
  readonly #providers = new Map<string, UsageCounts>();
  readonly #tasks = new Map<string, TaskUsage>();

  record(record: UsageRecord): void {
    const provider = this.#providers.get(record.provider) ?? zero();
    add(provider, record);
    this.#providers.set(record.provider, provider);
    if (record.task === null) return;
    const task = this.#tasks.get(record.task) ?? { ...zero(), by_provider: {} };
    this.#tasks.delete(record.task); // re-inserted last: the map's order is least recently used first
    add(task, record);
    add((task.by_provider[record.provider] ??= zero()), record);
    this.#tasks.set(record.task, task);
    if (this.#tasks.size > MAX_TASKS) this.#tasks.delete(this.#tasks.keys().next().value as string);
  }

  task(id: string): TaskUsage | null {
    return this.#tasks.get(id) ?? null;
  }

  snapshot(): UsageSnapshot {
    return { since: this.#since, providers: Object.fromEntries(this.#providers), tasks: Object.fromEntries(this.#tasks) };
  }
}
