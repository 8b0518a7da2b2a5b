/**
 * The conversation of one executor session, kept as one JSON file (`<dir>/<id>.json`, mode 0600, in
 * a 0700 directory) so that a later turn, a new process, continues it with `--resume ID`.
 *
 * It is saved only at points where it is valid for a strict server — every tool call answered, or
 * (waiting) every call answered but the pending `ask` — and always whole (a temporary file renamed
 * into place), so a process killed at any moment leaves the last valid state behind.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ChatMessage } from './messages.js';

export const CONVERSATION_SCHEMA = 'majordomus-executor-conversation/v1';

/** Below `<root>/<local>/` when `MAJORDOMUS_EXECUTOR_STATE` is not set. */
export const STATE_BELOW_LOCAL = 'state/executor';

/** The question a waiting conversation asked; its answer becomes the `tool` result of `callId`. */
export interface PendingAsk {
  callId: string;
  question: string;
  options: string[];
}

/** The last usage report, for estimating the context: tokens then, and the characters sent then. */
export interface ContextBaseline {
  promptTokens: number;
  chars: number;
}

export interface Conversation {
  schema: typeof CONVERSATION_SCHEMA;
  id: string;
  createdAt: string;
  updatedAt: string;
  /** The system prompt first, then the exchanges, as sent. */
  messages: ChatMessage[];
  pendingAsk: PendingAsk | null;
  /** Absolute paths read so far: edit_file edits only those, across turns too. */
  readFiles: string[];
  baseline: ContextBaseline | null;
}

const ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for what a conversation id looks like (a UUID): nothing else is ever joined to a path. */
export function isConversationId(id: string): boolean {
  return ID_PATTERN.test(id);
}

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const MessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({ role: z.literal('assistant'), content: z.string().nullable(), tool_calls: z.array(ToolCallSchema).optional() }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }),
]);

const ConversationSchema = z.object({
  schema: z.literal(CONVERSATION_SCHEMA),
  id: z.string().regex(ID_PATTERN),
  createdAt: z.string(),
  updatedAt: z.string(),
  messages: z.array(MessageSchema).min(1),
  pendingAsk: z.object({ callId: z.string(), question: z.string(), options: z.array(z.string()) }).nullable(),
  readFiles: z.array(z.string()),
  baseline: z.object({ promptTokens: z.number().nonnegative(), chars: z.number().nonnegative() }).nullable(),
});

/** A resume id that names no conversation, or one that cannot be read. */
export class ConversationError extends Error {
  override name = 'ConversationError';
  readonly reason: 'unknown' | 'corrupt';
  constructor(reason: 'unknown' | 'corrupt', message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Where the conversations of this checkout (or of this harness session) live. */
export function conversationDir(stateDir: string | null, root: string, localPath: string): string {
  return stateDir ?? join(root, localPath, STATE_BELOW_LOCAL);
}

export class ConversationStore {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  get dir(): string {
    return this.#dir;
  }

  /** The file of conversation `id`. */
  pathOf(id: string): string {
    if (!isConversationId(id)) throw new ConversationError('unknown', `"${id}" is not a conversation id`);
    return join(this.#dir, `${id}.json`);
  }

  /** A new conversation with a fresh id, holding the system prompt. Not saved yet. */
  create(systemPrompt: string): Conversation {
    const now = new Date().toISOString();
    return {
      schema: CONVERSATION_SCHEMA,
      id: randomUUID(),
      createdAt: now,
      updatedAt: now,
      messages: [{ role: 'system', content: systemPrompt }],
      pendingAsk: null,
      readFiles: [],
      baseline: null,
    };
  }

  /** Loads conversation `id`; an unknown or unreadable one is a `ConversationError` naming it. */
  async load(id: string): Promise<Conversation> {
    const path = this.pathOf(id);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new ConversationError('unknown', `no conversation ${id} in ${this.#dir}`);
      }
      throw new ConversationError('corrupt', `the conversation ${id} cannot be read: ${(error as Error).message}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ConversationError('corrupt', `the conversation ${id} is corrupt (not JSON: ${(error as Error).message})`);
    }
    const parsed = ConversationSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : 'invalid';
      throw new ConversationError('corrupt', `the conversation ${id} is corrupt (${where})`);
    }
    if (parsed.data.id !== id) throw new ConversationError('corrupt', `the conversation ${id} is corrupt (it holds ${parsed.data.id})`);
    return parsed.data as Conversation;
  }

  /** Writes the conversation whole (0600, directory 0700), replacing the previous version. */
  async save(conversation: Conversation): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    conversation.updatedAt = new Date().toISOString();
    const path = this.pathOf(conversation.id);
    const temp = `${path}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
    try {
      await writeFile(temp, `${JSON.stringify(conversation)}\n`, { mode: 0o600, flag: 'wx' });
      await rename(temp, path);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }
}
