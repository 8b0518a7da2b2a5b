/**
 * What the gateway counts: one record per forwarded request, after it ended (the record is plain
 * data: it crosses to the harness thread, whose table — src/tasks/usage.ts — sums it per provider
 * and per task), and the scanner that finds a stream's usage chunk as it passes.
 */
/** One forwarded request, as the gateway reports it once it ended. */
export interface UsageRecord {
  /** `X-Majordomus-Task` of the request (the harness session the executor runs as), if any. */
  task: string | null;
  /** The provider that answered (or the last one tried). */
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** How many providers failed before this one answered. */
  failovers: number;
  /** Whether a provider answered successfully. */
  ok: boolean;
}

/** Where the gateway reports each record. */
export type UsageReport = (record: UsageRecord) => void;

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
