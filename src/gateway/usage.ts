/**
 * What the gateway counts: one record per forwarded request, after it ended, and the table that
 * sums them per provider and per task. The table lives in the HTTP thread for now; the record is
 * plain data so it can cross a thread as it is.
 */

/** One forwarded request, after its upstream answer ended (or failed). */
export interface UsageRecord {
  /** `X-Majordomus-Task` of the request (≤ 64 chars of [A-Za-z0-9-]), or null without one. */
  task: string | null;
  /** The provider that answered last (after failovers), by slug. */
  provider: string;
  /** The provider's model name. */
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** How many chain entries were given up on before this one. */
  failovers: number;
  /** Whether the upstream answered 2xx and its body arrived whole. */
  ok: boolean;
}

/** Where the gateway reports each record. */
export type UsageReport = (record: UsageRecord) => void;

export interface UsageTotals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  failovers: number;
}

export interface UsageSnapshot {
  providers: Record<string, UsageTotals>;
  tasks: Record<string, UsageTotals>;
}

export interface UsageTable {
  record(record: UsageRecord): void;
  /** A copy of the sums, per provider slug and per task id (requests without a task are in providers only). */
  snapshot(): UsageSnapshot;
}

function add(into: Map<string, UsageTotals>, key: string, record: UsageRecord): void {
  const totals = into.get(key) ?? { requests: 0, prompt_tokens: 0, completion_tokens: 0, failovers: 0 };
  totals.requests += 1;
  totals.prompt_tokens += record.prompt_tokens;
  totals.completion_tokens += record.completion_tokens;
  totals.failovers += record.failovers;
  into.set(key, totals);
}

/** Sums in memory; the table forgets nothing until the server ends. */
export function createUsageTable(): UsageTable {
  const providers = new Map<string, UsageTotals>();
  const tasks = new Map<string, UsageTotals>();
  const copy = (from: Map<string, UsageTotals>): Record<string, UsageTotals> => Object.fromEntries([...from].map(([key, totals]) => [key, { ...totals }]));
  return {
    record(record) {
      add(providers, record.provider, record);
      if (record.task !== null) add(tasks, record.task, record);
    },
    snapshot: () => ({ providers: copy(providers), tasks: copy(tasks) }),
  };
}

/** Tokens of an OpenAI `usage` object; zeros for what is missing or not a count. */
export function tokensOf(usage: unknown): { prompt_tokens: number; completion_tokens: number } | null {
  if (typeof usage !== 'object' || usage === null) return null;
  const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
  const { prompt_tokens, completion_tokens } = usage as Record<string, unknown>;
  return { prompt_tokens: count(prompt_tokens), completion_tokens: count(completion_tokens) };
}

/**
 * Watches an SSE byte stream for the chunk carrying `usage` (the last one, with
 * `stream_options.include_usage`). It reads lines as they pass and never holds a byte back: the
 * caller forwards each chunk first, then feeds it here.
 */
export class SseUsageScanner {
  #partial = '';
  readonly #decoder = new TextDecoder();
  usage: { prompt_tokens: number; completion_tokens: number } | null = null;

  feed(chunk: Uint8Array): void {
    const text = this.#partial + this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
      this.#line(text.slice(start, end));
      start = end + 1;
    }
    // A line longer than any chunk of usage is kept only as far as it could still matter.
    this.#partial = text.slice(start);
    if (this.#partial.length > 1024 * 1024) this.#partial = '';
  }

  #line(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    // Only a data line naming "usage" is parsed: most chunks are skipped at the cost of a search.
    if (!line.startsWith('data:') || !line.includes('"usage"')) return;
    try {
      const value = JSON.parse(line.slice(5)) as { usage?: unknown };
      const tokens = tokensOf(value.usage);
      if (tokens) this.usage = tokens;
    } catch {
      // not JSON: a provider's oddity, not ours to refuse
    }
  }
}
