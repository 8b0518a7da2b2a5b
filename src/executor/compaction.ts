/**
 * Keeping the conversation inside the model's context. When the estimate passes the limit, old
 * tool results are snipped first (oldest first; the last exchanges stay whole), and only if that is
 * not enough is the oldest part summarised by the model and replaced by one user message.
 *
 * The one rule a strict server enforces: a `tool` message answers a call of the assistant message
 * just before it, and an assistant message's calls are all answered. So the conversation is only
 * ever cut between blocks — a user message, or an assistant message with all its tool results —
 * and a snip changes a result's content, never its place.
 */
import type { ContextBaseline } from './conversation.js';
import { callsTools, charsOf, type ChatMessage } from './messages.js';

/** `[start, end)` of one block of the conversation. */
export interface Block {
  start: number;
  end: number;
}

export interface CompactionOptions {
  /** Compact when the estimate is above this. */
  limitTokens: number;
  /** Compact down to this (below the limit, so the next turns have room). */
  targetTokens: number;
  /** The last usage report, or null (then chars/3 alone). */
  baseline: ContextBaseline | null;
  /** The last blocks kept whole, never snipped or summarised. */
  keepBlocks: number;
  /** One model request that summarises `older` (the part being replaced). */
  summarise(older: readonly ChatMessage[]): Promise<string>;
}

export interface Compaction {
  messages: ChatMessage[];
  /** Tool results whose content was replaced. */
  snipped: number;
  /** Messages replaced by the summary (0 when snipping was enough). */
  summarised: number;
  before: number;
  after: number;
}

/** Tool results shorter than this are left alone: snipping them would save nothing. */
const SNIP_MIN_CHARS = 200;
const SNIPPED = /^\[tool result snipped: \d+ chars\]$/;
export const SUMMARY_HEADING = '[Summary of the earlier conversation, compacted to save context]';

/** Tokens the messages take: the last report plus a third of every character added since, else chars/3. */
export function estimateTokens(messages: readonly ChatMessage[], baseline: ContextBaseline | null): number {
  const chars = totalChars(messages);
  if (baseline === null) return Math.ceil(chars / 3);
  return Math.max(0, baseline.promptTokens + Math.ceil((chars - baseline.chars) / 3));
}

export function totalChars(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, message) => sum + charsOf(message), 0);
}

/**
 * The blocks after the leading system message: each starts at a message that is not a tool result,
 * and every tool result belongs to the block it follows.
 */
export function blocksOf(messages: readonly ChatMessage[]): Block[] {
  const blocks: Block[] = [];
  const first = messages[0]?.role === 'system' ? 1 : 0;
  for (let index = first; index < messages.length; index++) {
    const last = blocks.at(-1);
    if (messages[index]?.role === 'tool' && last !== undefined) last.end = index + 1;
    else blocks.push({ start: index, end: index + 1 });
  }
  return blocks;
}

/**
 * Why the conversation would be refused by a strict server, or null when it is valid: every tool
 * result follows the assistant message that made its call (only other results between), and every
 * call of an assistant message is answered exactly once before the next message.
 */
export function conversationProblem(messages: readonly ChatMessage[]): string | null {
  let open: Set<string> | null = null;
  let openAt = -1;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as ChatMessage;
    if (message.role === 'tool') {
      if (open === null) return `message ${index}: a tool result with no assistant tool call before it`;
      if (!open.has(message.tool_call_id)) return `message ${index}: a tool result for ${message.tool_call_id}, which message ${openAt} did not call (or was answered already)`;
      open.delete(message.tool_call_id);
      continue;
    }
    if (open !== null && open.size > 0) return `message ${openAt}: calls ${[...open].join(', ')} left unanswered`;
    if (message.role === 'system' && index !== 0) return `message ${index}: a system message after the start`;
    open = null;
    if (callsTools(message)) {
      open = new Set(message.tool_calls.map((call) => call.id));
      if (open.size !== message.tool_calls.length) return `message ${index}: two calls share an id`;
      openAt = index;
    }
  }
  if (open !== null && open.size > 0) return `message ${openAt}: calls ${[...open].join(', ')} left unanswered`;
  return null;
}

/** Compacts when the estimate is over the limit; null when it is not. Never breaks a block. */
export async function compact(messages: readonly ChatMessage[], options: CompactionOptions): Promise<Compaction | null> {
  const before = estimateTokens(messages, options.baseline);
  if (before <= options.limitTokens) return null;
  const out = [...messages];
  const estimate = (): number => estimateTokens(out, options.baseline);
  const blocks = blocksOf(out);
  const older = blocks.slice(0, Math.max(0, blocks.length - options.keepBlocks));

  let snipped = 0;
  snipping: for (const block of older) {
    for (let index = block.start; index < block.end; index++) {
      const message = out[index] as ChatMessage;
      if (message.role !== 'tool' || message.content.length < SNIP_MIN_CHARS || SNIPPED.test(message.content)) continue;
      out[index] = { ...message, content: `[tool result snipped: ${message.content.length} chars]` };
      snipped++;
      if (estimate() <= options.targetTokens) break snipping;
    }
  }

  let summarised = 0;
  const firstOlder = older[0];
  const lastOlder = older.at(-1);
  if (estimate() > options.targetTokens && firstOlder !== undefined && lastOlder !== undefined) {
    const part = out.slice(firstOlder.start, lastOlder.end);
    const summary = `${SUMMARY_HEADING}\n${(await options.summarise(part)).trim()}`;
    const rest = out.slice(lastOlder.end);
    const head = out.slice(0, firstOlder.start);
    const next = rest[0];
    // Two user messages in a row are legal but some servers merge or refuse them: join them.
    const joined: ChatMessage[] =
      next?.role === 'user' ? [{ role: 'user', content: `${summary}\n\n${next.content}` }, ...rest.slice(1)] : [{ role: 'user', content: summary }, ...rest];
    const candidate = [...head, ...joined];
    // A summary longer than what it replaces (a short old part) is worth nothing: keep the part.
    if (estimateTokens(candidate, options.baseline) < estimate()) {
      out.splice(0, out.length, ...candidate);
      summarised = part.length;
    }
  }
  return { messages: out, snipped, summarised, before, after: estimate() };
}

/**
 * The part to summarise as plain text for the summary request, each message capped (a tool result
 * is rarely worth more than its head and tail there) and the whole capped at `maxChars`.
 */
export function renderForSummary(part: readonly ChatMessage[], maxChars: number): string {
  const lines = part.map((message) => {
    switch (message.role) {
      case 'system':
        return `SYSTEM: ${cap(message.content, 2_000)}`;
      case 'user':
        return `USER: ${cap(message.content, 4_000)}`;
      case 'assistant': {
        const calls = (message.tool_calls ?? []).map((call) => `\n  [called ${call.function.name} ${cap(call.function.arguments, 500)}]`).join('');
        return `ASSISTANT: ${cap(message.content ?? '', 4_000)}${calls}`;
      }
      case 'tool':
        return `TOOL RESULT: ${cap(message.content, 1_500)}`;
    }
  });
  return cap(lines.join('\n\n'), maxChars);
}

/** `text` whole when short, else its head and tail with what was left out named between them. */
export function cap(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.ceil(maxChars * 0.6);
  const tail = Math.max(0, maxChars - head);
  return `${text.slice(0, head)}\n[… ${text.length - head - tail} chars left out …]\n${tail > 0 ? text.slice(-tail) : ''}`;
}
