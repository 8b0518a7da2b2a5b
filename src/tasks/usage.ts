/**
 * The gateway's usage, counted where the tasks live (the harness thread): every model request the
 * gateway forwarded, by provider, by caller (the lease's token or a key) and by task, with what it
 * cost where the config prices its model. The HTTP thread reports each request once it ended;
 * `GET /api/v1/usage`, check_task and the live page read the counts. Kept in memory: a new server
 * starts at zero (a task's own token totals, which its executor reports, survive in its
 * transcript).
 *
 * Costs are summed in one currency, the first a priced request came in: a request priced in
 * another (the config's currency changed while the server ran) is counted without its cost.
 */
import { log } from '../platform/log.js';
import type { UsageRecord } from '../gateway/usage.js';

export type { UsageRecord };

export interface UsageCounts {
  requests: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  failovers: number;
  /** Requests whose model had a price (the others are not in `cost`); absent when none had. */
  priced_requests?: number;
  /** What the priced requests cost, in the snapshot's currency. */
  cost?: number;
  /** What they saved against the reference price; absent without one. */
  saved?: number;
}

export interface TaskUsage extends UsageCounts {
  by_provider: Record<string, UsageCounts>;
  /** The currency of `cost`, when there is one. */
  currency?: string;
}

export interface UsageSnapshot {
  since: string;
  /** The currency of every `cost` and `saved`, or null when no request had a price. */
  currency: string | null;
  /** What `saved` is measured against (`prices.reference.name`), or null. */
  reference: string | null;
  total: UsageCounts;
  providers: Record<string, UsageCounts>;
  /** By caller: `lease` (the lease's token) or the key's name. */
  keys: Record<string, UsageCounts>;
  tasks: Record<string, TaskUsage>;
}

/** Tasks counted at most; the least recently used one is forgotten past it. */
const MAX_TASKS = 1024;

/** Money is shown to a millionth: float sums carry noise below that. */
function money(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** One row's running sums. */
class Tally {
  #requests = 0;
  #failed = 0;
  #prompt = 0;
  #completion = 0;
  #failovers = 0;
  #priced = 0;
  #cost = 0;
  #savedCounted = 0;
  #saved = 0;

  /** Adds a record; `priced` says whether its charge is in the table's currency. */
  add(record: UsageRecord, priced: boolean): void {
    this.#requests += 1;
    if (!record.ok) this.#failed += 1;
    this.#prompt += record.prompt_tokens;
    this.#completion += record.completion_tokens;
    this.#failovers += record.failovers;
    if (!priced || record.charge === null) return;
    this.#priced += 1;
    this.#cost += record.charge.cost;
    if (record.charge.saved !== null) {
      this.#savedCounted += 1;
      this.#saved += record.charge.saved;
    }
  }

  get priced(): boolean {
    return this.#priced > 0;
  }

  counts(): UsageCounts {
    const counts: UsageCounts = {
      requests: this.#requests,
      failed: this.#failed,
      prompt_tokens: this.#prompt,
      completion_tokens: this.#completion,
      failovers: this.#failovers,
    };
    if (this.#priced > 0) Object.assign(counts, { priced_requests: this.#priced, cost: money(this.#cost) });
    if (this.#savedCounted > 0) counts.saved = money(this.#saved);
    return counts;
  }
}

interface TaskTally {
  all: Tally;
  byProvider: Map<string, Tally>;
}

function tallyOf(map: Map<string, Tally>, name: string): Tally {
  let tally = map.get(name);
  if (!tally) map.set(name, (tally = new Tally()));
  return tally;
}

function countsOf(map: ReadonlyMap<string, Tally>): Record<string, UsageCounts> {
  return Object.fromEntries([...map].map(([name, tally]) => [name, tally.counts()]));
}

export class UsageTable {
  readonly #since = new Date().toISOString();
  readonly #total = new Tally();
  readonly #providers = new Map<string, Tally>();
  readonly #keys = new Map<string, Tally>();
  readonly #tasks = new Map<string, TaskTally>();
  #currency: string | null = null;
  #reference: string | null = null;
  #warnedCurrency = false;

  record(record: UsageRecord): void {
    const priced = this.#inCurrency(record);
    this.#total.add(record, priced);
    tallyOf(this.#providers, record.provider).add(record, priced);
    tallyOf(this.#keys, record.key).add(record, priced);
    if (record.task === null) return;
    const task = this.#tasks.get(record.task) ?? { all: new Tally(), byProvider: new Map<string, Tally>() };
    this.#tasks.delete(record.task); // re-inserted last: the map's order is least recently used first
    task.all.add(record, priced);
    tallyOf(task.byProvider, record.provider).add(record, priced);
    this.#tasks.set(record.task, task);
    if (this.#tasks.size > MAX_TASKS) this.#tasks.delete(this.#tasks.keys().next().value as string);
  }

  task(id: string): TaskUsage | null {
    const task = this.#tasks.get(id);
    if (!task) return null;
    const usage: TaskUsage = { ...task.all.counts(), by_provider: countsOf(task.byProvider) };
    if (task.all.priced && this.#currency !== null) usage.currency = this.#currency;
    return usage;
  }

  snapshot(): UsageSnapshot {
    const tasks: Record<string, TaskUsage> = {};
    for (const id of this.#tasks.keys()) tasks[id] = this.task(id) as TaskUsage;
    return {
      since: this.#since,
      currency: this.#currency,
      reference: this.#reference,
      total: this.#total.counts(),
      providers: countsOf(this.#providers),
      keys: countsOf(this.#keys),
      tasks,
    };
  }

  /** Whether the record's charge can be summed: the table takes the currency of the first one. */
  #inCurrency(record: UsageRecord): boolean {
    const charge = record.charge;
    if (charge === null) return false;
    this.#currency ??= charge.currency;
    if (charge.reference !== null) this.#reference = charge.reference;
    if (charge.currency === this.#currency) return true;
    if (!this.#warnedCurrency) {
      this.#warnedCurrency = true;
      log.warn(`usage: a request was priced in ${charge.currency} while earlier ones were in ${this.#currency}; it is counted without its cost until the server restarts`);
    }
    return false;
  }
}
