/**
 * One turn of the executor: the task (or the answer to the pending question) goes into the
 * conversation, then model requests and tool runs alternate until the model answers, asks, repeats
 * itself, runs out of requests, fails or is cancelled. Every way out prints exactly one `result`
 * event naming that state, with the usage the server reported for this turn's requests.
 *
 * The conversation is saved whenever it is valid for a strict server (after the input, after each
 * exchange's tool results, at the end), so a process killed at any point leaves a resumable state.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { ChatError, streamChat, type ChatEndpoint, type ChatReply, type ChatRequest, type ChatRoute, type ToolSpec } from './chat.js';
import { cap, compact, renderForSummary, totalChars } from './compaction.js';
import type { Conversation, ConversationStore } from './conversation.js';
import type { EmitEvent, ResultEvent, TurnStatus } from './events.js';
import { LoopGuard } from './guards.js';
import type { AssistantMessage, ChatMessage, ToolCall, Usage } from './messages.js';
import type { ExecutorTool, ToolContext, ToolOutcome } from './tool.js';

export const DEFAULT_MAX_TURNS = 200;
export const DEFAULT_CONTEXT_TOKENS = 32_000;
/** What the model reads of one tool result at most (head and tail kept). */
export const TOOL_RESULT_CAP = 30_000;
/** Compaction starts above this share of the context and compacts down to the next. */
const COMPACT_ABOVE = 0.8;
const COMPACT_TO = 0.6;
/** The last blocks (exchanges) compaction always keeps whole. */
const KEEP_BLOCKS = 4;

export const FORCED_SUMMARY_PROMPT = 'Summarise what you did and the result.';
const SUMMARY_SYSTEM_PROMPT =
  'You compact the earlier part of a coding agent\'s conversation. Write a dense summary that keeps the task as given, every decision, every file read or changed (with what matters of its content), commands run and their outcomes, and what remains to do. No preamble.';

export interface TurnOptions {
  conversation: Conversation;
  store: ConversationStore;
  /** The task text; when the conversation waits on a question, the answer to it. */
  input: string;
  tools: readonly ExecutorTool[];
  endpoint: ChatEndpoint;
  /** Sent as `model`; null lets the gateway route. */
  model: string | null;
  /** Model requests this turn may make (`--max-turns`). */
  maxTurns: number;
  /** The context the model has, in tokens (`--context-tokens`). */
  contextTokens: number;
  root: string;
  cwd: string;
  /** Aborted to cancel the turn (SIGTERM, SIGINT, SIGHUP). */
  signal: AbortSignal;
  emit: EmitEvent;
  /** The chat client; tests put a scripted one in its place. */
  chat?: (endpoint: ChatEndpoint, request: ChatRequest, signal?: AbortSignal) => Promise<ChatReply>;
  /** The wait before the one retry of a refused connection. Default 1 s. */
  retryDelayMs?: number;
}

/** Runs one turn to its end; prints its events and its one result, which it also returns. */
export async function runTurn(options: TurnOptions): Promise<ResultEvent> {
  return new Turn(options).run();
}

/** What stops the turn from inside (a state other than an error thrown). */
class TurnEnd {
  constructor(
    readonly status: TurnStatus,
    readonly fields: Pick<ResultEvent, 'answer' | 'question' | 'options' | 'error'>,
  ) {}
}

class Turn {
  readonly #o: TurnOptions;
  readonly #c: Conversation;
  readonly #chat: NonNullable<TurnOptions['chat']>;
  readonly #toolSpecs: ToolSpec[];
  readonly #usage: Usage = { prompt_tokens: 0, completion_tokens: 0 };
  /** Model requests answered this turn. */
  #requests = 0;
  readonly #guard = new LoopGuard();
  readonly #readFiles: Set<string>;

  constructor(options: TurnOptions) {
    this.#o = options;
    this.#c = options.conversation;
    this.#chat = options.chat ?? streamChat;
    this.#readFiles = new Set(this.#c.readFiles);
    this.#toolSpecs = options.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
  }

  async run(): Promise<ResultEvent> {
    let end: TurnEnd;
    try {
      this.#takeInput();
      await this.#save();
      end = await this.#loop();
    } catch (error) {
      end = this.#o.signal.aborted ? cancelled() : new TurnEnd('error', { error: error instanceof Error ? error.message : String(error) });
    }
    try {
      await this.#save();
    } catch (error) {
      if (end.status === 'completed' || end.status === 'waiting') end = new TurnEnd('error', { error: `the conversation could not be saved: ${(error as Error).message}` });
    }
    const result: ResultEvent = { type: 'result', status: end.status, ...end.fields, usage: { ...this.#usage }, requests: this.#requests };
    this.#o.emit(result);
    return result;
  }

  #takeInput(): void {
    const pending = this.#c.pendingAsk;
    if (pending !== null) {
      // The answer is the result of the ask call: the conversation stays valid for strict servers.
      this.#c.messages.push({ role: 'tool', tool_call_id: pending.callId, content: this.#o.input });
      this.#c.pendingAsk = null;
    } else {
      this.#c.messages.push({ role: 'user', content: this.#o.input });
    }
    this.#o.emit({ type: 'message', role: 'user', text: this.#o.input });
  }

  async #loop(): Promise<TurnEnd> {
    for (let requests = 0; ; requests++) {
      if (this.#o.signal.aborted) return cancelled();
      if (requests >= this.#o.maxTurns) {
        return new TurnEnd('max_turns', { error: `stopped after ${requests} model requests (--max-turns ${this.#o.maxTurns}) without a final answer` });
      }
      await this.#compactIfFull();
      const sent = [...this.#c.messages];
      const reply = await this.#request({ model: this.#o.model, messages: sent, tools: this.#toolSpecs, toolChoice: 'auto' });
      if (reply.usage !== null) this.#c.baseline = { promptTokens: reply.usage.prompt_tokens, chars: totalChars(sent) };
      if (reply.content.trim() !== '') this.#o.emit({ type: 'message', role: 'assistant', text: reply.content });

      if (reply.toolCalls.length === 0) {
        const answer = reply.content.trim() !== '' ? reply.content : await this.#forcedSummary();
        this.#c.messages.push({ role: 'assistant', content: answer });
        return new TurnEnd('completed', { answer });
      }
      const textLoop = this.#guard.noteText(reply.content);
      const end = await this.#runTools(reply);
      await this.#save();
      if (end !== null) return end;
      if (textLoop !== null) return new TurnEnd('loop', { error: textLoop });
    }
  }

  /** Runs the calls of one reply in order and appends the assistant message with their results. */
  async #runTools(reply: ChatReply): Promise<TurnEnd | null> {
    const assistant: AssistantMessage = { role: 'assistant', content: reply.content === '' ? null : reply.content, tool_calls: reply.toolCalls };
    const results: ChatMessage[] = [];
    let end: TurnEnd | null = null;
    const context: ToolContext = { root: this.#o.root, cwd: this.#o.cwd, readFiles: this.#readFiles, signal: this.#o.signal };
    for (const call of reply.toolCalls) {
      const input = parseArguments(call.function.arguments);
      this.#o.emit({ type: 'tool_call', id: call.id, name: call.function.name, input: input.ok ? input.value : call.function.arguments });
      const loop = this.#guard.noteCall(call.function.name, call.function.arguments);
      if (loop !== null && end === null) end = new TurnEnd('loop', { error: loop });
      let outcome: ToolOutcome;
      if (this.#o.signal.aborted) {
        outcome = { ok: false, output: '[not run: the turn was cancelled]' };
        end ??= cancelled();
      } else if (end !== null) {
        outcome = { ok: false, output: `[not run: the turn ended (${end.status})]` };
      } else {
        outcome = await this.#runOne(call, input, context);
        if (this.#o.signal.aborted) end ??= cancelled();
      }
      if (outcome.ask !== undefined && end === null) {
        this.#c.pendingAsk = { callId: call.id, question: outcome.ask.question, options: outcome.ask.options };
        end = new TurnEnd('waiting', { question: outcome.ask.question, options: outcome.ask.options });
        this.#o.emit({ type: 'tool_result', id: call.id, name: call.function.name, ok: true, output: 'waiting for the answer' });
        continue; // its result is the answer, added by the turn that brings it
      }
      const output = cap(outcome.output, TOOL_RESULT_CAP);
      this.#o.emit({ type: 'tool_result', id: call.id, name: call.function.name, ok: outcome.ok, output, ...(outcome.refused ? { refused: outcome.refused } : {}) });
      results.push({ role: 'tool', tool_call_id: call.id, content: output });
    }
    this.#c.messages.push(assistant, ...results);
    this.#c.readFiles = [...this.#readFiles];
    return end;
  }

  async #runOne(call: ToolCall, input: ParsedArguments, context: ToolContext): Promise<ToolOutcome> {
    const tool = this.#o.tools.find((candidate) => candidate.name === call.function.name);
    if (tool === undefined) {
      return { ok: false, output: `there is no tool named "${call.function.name}"; the tools are: ${this.#o.tools.map((t) => t.name).join(', ')}` };
    }
    if (!input.ok) return { ok: false, output: `the arguments of ${tool.name} are not valid JSON (${input.problem}); send a JSON object` };
    try {
      return await tool.run(input.value, context);
    } catch (error) {
      // A tool never throws for the model's mistakes; this is our own failure, reported as a result.
      return { ok: false, output: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }

  /** The answer to an empty reply: one request for a summary, with the tools declared but not callable. */
  async #forcedSummary(): Promise<string> {
    const prompt: ChatMessage = { role: 'user', content: FORCED_SUMMARY_PROMPT };
    const reply = await this.#request({ model: this.#o.model, messages: [...this.#c.messages, prompt], tools: this.#toolSpecs, toolChoice: 'none' });
    if (reply.content.trim() === '') throw new Error('the model answered with neither text nor a tool call, twice (the second time asked for a summary)');
    this.#o.emit({ type: 'message', role: 'assistant', text: reply.content });
    this.#c.messages.push(prompt);
    return reply.content;
  }

  async #compactIfFull(): Promise<void> {
    const limit = this.#o.contextTokens;
    const done = await compact(this.#c.messages, {
      limitTokens: Math.floor(limit * COMPACT_ABOVE),
      targetTokens: Math.floor(limit * COMPACT_TO),
      baseline: this.#c.baseline,
      keepBlocks: KEEP_BLOCKS,
      summarise: async (older) => {
        const text = renderForSummary(older, Math.floor(limit * 3 * 0.5));
        const reply = await this.#request({
          model: this.#o.model,
          messages: [
            { role: 'system', content: SUMMARY_SYSTEM_PROMPT },
            { role: 'user', content: text },
          ],
          tools: [],
        });
        if (reply.content.trim() === '') throw new Error('compaction failed: the model returned an empty summary');
        return reply.content;
      },
    });
    if (done === null) return;
    this.#c.messages = done.messages;
    this.#o.emit({ type: 'compaction', snipped: done.snipped, summarised: done.summarised, tokens_before: done.before, tokens_after: done.after });
    await this.#save();
  }

  /** One request; its usage is counted and a failover shows. A refused connection is tried once more. */
  async #request(request: ChatRequest): Promise<ChatReply> {
    for (let attempt = 0; ; attempt++) {
      try {
        const reply = await this.#chat(this.#o.endpoint, request, this.#o.signal);
        this.#noteRoute(reply.route);
        this.#requests += 1;
        if (reply.usage !== null) {
          this.#usage.prompt_tokens += reply.usage.prompt_tokens;
          this.#usage.completion_tokens += reply.usage.completion_tokens;
        }
        return reply;
      } catch (error) {
        if (error instanceof ChatError) this.#noteRoute(error.route);
        // Nothing was sent and nothing answered: a server restarting may be back in a second.
        const refused = error instanceof ChatError && error.kind === 'unreachable' && error.code === 'ECONNREFUSED';
        if (!refused || attempt > 0 || this.#o.signal.aborted) throw error;
        await delay(this.#o.retryDelayMs ?? 1_000, undefined, { signal: this.#o.signal });
      }
    }
  }

  #noteRoute(route: ChatRoute | null): void {
    if (route !== null && route.failovers.length > 0) this.#o.emit({ type: 'route', provider: route.provider, model: route.model, failovers: route.failovers });
  }

  async #save(): Promise<void> {
    await this.#o.store.save(this.#c);
  }
}

function cancelled(): TurnEnd {
  return new TurnEnd('cancelled', { error: 'the turn was cancelled' });
}

type ParsedArguments = { ok: true; value: unknown } | { ok: false; problem: string };

function parseArguments(text: string): ParsedArguments {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}
