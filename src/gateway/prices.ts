/**
 * What a model costs, from `prices` in executor.yaml: per model pattern (model-patterns.ts; the
 * most specific one that covers a request applies) a price per million input and output tokens,
 * in one currency stated once. A request is charged when it ends, at the prices of that moment,
 * so a later change to the file does not rewrite what was already spent.
 *
 * Optionally a `reference` price — what the same tokens would have cost on the model the
 * orchestrator would otherwise have used (e.g. Claude Sonnet's list price) — makes each charge
 * also say how much was saved against it, as HermitAgent's users watch.
 */
import { z } from 'zod';
import type { ProviderConfig } from './config.js';
import { parseModelPattern, patternMatches, type ModelPattern, type RoutedModel } from './model-patterns.js';
import type { Tokens } from './providers/provider.js';

const perMillion = z.number().min(0).max(1_000_000);
const priceSchema = z.strictObject({ input_per_million: perMillion, output_per_million: perMillion });

export const pricesSchema = z.strictObject({
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be a currency code such as USD or EUR').default('USD'),
  models: z.record(z.string().min(1).max(300), priceSchema),
  reference: priceSchema.extend({ name: z.string().min(1).max(200) }).optional(),
});

export interface Price {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
}

/** What one request cost, and saved against the reference when there is one (plain data: it crosses threads). */
export interface Charge {
  cost: number;
  currency: string;
  /** The reference's cost of the same tokens minus `cost`; null without a reference. */
  saved: number | null;
  /** The reference's name, or null. */
  reference: string | null;
}

export class PriceTable {
  readonly currency: string;
  /** The reference's name (`claude-sonnet-4-5 list price`), or null. */
  readonly referenceName: string | null;
  readonly #entries: ReadonlyArray<{ pattern: ModelPattern; price: Price }>;
  readonly #reference: Price | null;

  constructor(currency: string, entries: ReadonlyArray<{ pattern: ModelPattern; price: Price }>, reference: (Price & { name: string }) | null) {
    this.currency = currency;
    // The most specific first: the first that covers a request is its price.
    this.#entries = [...entries].sort((a, b) => b.pattern.rank - a.pattern.rank);
    this.#reference = reference;
    this.referenceName = reference?.name ?? null;
  }

  /** The price of `routed`, or null when no entry covers it. */
  priceOf(routed: RoutedModel): Price | null {
    return this.#entries.find((entry) => patternMatches(entry.pattern, routed))?.price ?? null;
  }

  /** What `tokens` on `routed` cost; null when its price is unknown. */
  charge(routed: RoutedModel, tokens: Tokens): Charge | null {
    const price = this.priceOf(routed);
    if (price === null) return null;
    const cost = costOf(price, tokens);
    const saved = this.#reference === null ? null : costOf(this.#reference, tokens) - cost;
    return { cost, currency: this.currency, saved, reference: this.referenceName };
  }
}

function costOf(price: Price, tokens: Tokens): number {
  return (tokens.prompt_tokens * price.inputPerMillion + tokens.completion_tokens * price.outputPerMillion) / 1_000_000;
}

/** The table of a validated `prices` section, or the problems with its model names. */
export function readPrices(parsed: z.infer<typeof pricesSchema>, providers: ReadonlyMap<string, ProviderConfig>): { table: PriceTable; problems: string[] } {
  const problems: string[] = [];
  const entries: Array<{ pattern: ModelPattern; price: Price }> = [];
  for (const [text, price] of Object.entries(parsed.models)) {
    const pattern = parseModelPattern(text, providers);
    if ('error' in pattern) problems.push(`prices.models.${text}: ${pattern.error}`);
    else entries.push({ pattern, price: { inputPerMillion: price.input_per_million, outputPerMillion: price.output_per_million } });
  }
  const reference = parsed.reference;
  return {
    table: new PriceTable(
      parsed.currency,
      entries,
      reference === undefined ? null : { name: reference.name, inputPerMillion: reference.input_per_million, outputPerMillion: reference.output_per_million },
    ),
    problems,
  };
}
