/**
 * `majordomus exec --json`: one turn of the built-in coding agent. The command line is checked
 * first (every problem exits 2 naming the option); from then on stdout carries events only, and
 * whatever goes wrong ends in a `result` event with status `error` and the reason.
 */
import { realpath } from 'node:fs/promises';
import { EXIT, errorMessage } from '../../platform/errors.js';
import type { ChatEndpoint } from '../../executor/chat.js';
import { ConversationError, ConversationStore, conversationDir, isConversationId, type Conversation } from '../../executor/conversation.js';
import { stdoutEvents, type EmitEvent } from '../../executor/events.js';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_MAX_TURNS, runTurn } from '../../executor/loop.js';
import { floorRulesOf } from '../../floor/policy.js';
import { systemPrompt } from '../../executor/prompt.js';
import { createTools } from '../../executor/tools/index.js';
import { log } from '../../platform/log.js';
import { readExecutorSettings, secretFromEnv } from '../../platform/settings.js';
import { locateCheckout } from '../../shared/locate.js';
import { readLease } from '../../shared/lease.js';
import { choiceOption, integerOption, usageError, type ParsedArgs } from '../args.js';

/** A cancelled turn that does not end by itself within this is ended anyway (the harness waits ~2 s). */
const CANCEL_DEADLINE_MS = 1_500;

export interface ExecOptions {
  resume: string | null;
  model: string | null;
  mode: 'default' | 'read-only';
  maxTurns: number;
  contextTokens: number;
  baseUrl: string | null;
  apiKeyEnv: string | null;
}

/** Checks the command line; every problem is MAJ_USAGE (exit 2) naming the option. */
export function execOptions(args: ParsedArgs): ExecOptions {
  if (args.positionals.length > 0) throw usageError(`exec takes no arguments (the task is read from stdin), not "${args.positionals.join(' ')}"`);
  for (const name of ['repo', 'discovery', 'strict'] as const) {
    if (args.options[name] !== undefined) throw usageError(`--${name} is not an option of exec (it works in the checkout of its working directory)`);
  }
  const o = args.options;
  if (o.json !== true) throw usageError('exec needs --json: JSON-line events are its only output format');
  const text = (name: 'resume' | 'model' | 'base-url' | 'api-key-env'): string | null => {
    const value = o[name];
    if (value === undefined) return null;
    if (typeof value !== 'string' || value.trim() === '') throw usageError(`--${name} needs a value`);
    return value;
  };
  const resume = text('resume');
  if (resume !== null && !isConversationId(resume)) throw usageError(`--resume takes the id a session event printed (a UUID), not "${resume}"`);
  const baseUrl = text('base-url');
  if (baseUrl !== null) {
    let url: URL | null = null;
    try {
      url = new URL(baseUrl);
    } catch {
      url = null;
    }
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw usageError(`--base-url must be an http(s) URL such as http://127.0.0.1:11434/v1, not "${baseUrl}"`);
  }
  const apiKeyEnv = text('api-key-env');
  if (apiKeyEnv !== null) {
    if (baseUrl === null) throw usageError('--api-key-env goes with --base-url (the shared server\'s gateway takes the lease\'s token)');
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnv)) throw usageError(`--api-key-env takes an environment variable's name, not "${apiKeyEnv}"`);
    if (secretFromEnv(apiKeyEnv) === null) throw usageError(`--api-key-env ${apiKeyEnv}: that environment variable is not set`);
  }
  return Object.freeze({
    resume,
    model: text('model'),
    mode: choiceOption(o.mode, 'mode', ['default', 'read-only'] as const, 'default'),
    maxTurns: integerOption(o['max-turns'], 'max-turns', 1, 100_000, DEFAULT_MAX_TURNS),
    contextTokens: integerOption(o['context-tokens'], 'context-tokens', 1_000, 100_000_000, DEFAULT_CONTEXT_TOKENS),
    baseUrl: baseUrl === null ? null : baseUrl.replace(/\/+$/, ''),
    apiKeyEnv,
  });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Thrown where the turn cannot start; printed as the result's error. */
class CannotStart extends Error {}

/** The endpoint: --base-url, or the gateway of this checkout's shared server. */
async function endpointOf(options: ExecOptions, leasePath: string, taskId: string | null): Promise<ChatEndpoint> {
  if (options.baseUrl !== null) {
    return { baseUrl: options.baseUrl, apiKey: options.apiKeyEnv === null ? null : secretFromEnv(options.apiKeyEnv), taskId };
  }
  const lease = await readLease(leasePath).catch(() => null);
  if (lease?.state !== 'document' || lease.doc.url === null) {
    throw new CannotStart('no shared server runs in this checkout; start `majordomus mcp` there, or pass --base-url');
  }
  return { baseUrl: `${lease.doc.url.replace(/\/+$/, '')}/v1`, apiKey: lease.doc.token, taskId };
}

export async function runExec(args: ParsedArgs): Promise<number> {
  const options = execOptions(args);
  const input = await readStdin();
  if (input.trim() === '') {
    throw usageError(options.resume === null ? 'exec reads the task from stdin, and stdin was empty' : 'exec --resume reads the next task (or the answer) from stdin, and stdin was empty');
  }
  const emit = stdoutEvents();
  const controller = new AbortController();
  const cancel = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) return;
    log.info(`${signal}: cancelling the turn`);
    controller.abort();
    // The turn stops its request or tool at once; this is for a tool that does not.
    setTimeout(() => {
      emit({ type: 'result', status: 'cancelled', error: 'the turn was cancelled', usage: { prompt_tokens: 0, completion_tokens: 0 }, requests: 0 });
      process.exit(EXIT.ok);
    }, CANCEL_DEADLINE_MS).unref();
  };
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  for (const name of signals) process.on(name, cancel);
  try {
    await turn(options, input, emit, controller.signal);
  } finally {
    for (const name of signals) process.off(name, cancel);
  }
  return EXIT.ok;
}

async function turn(options: ExecOptions, input: string, emit: EmitEvent, signal: AbortSignal): Promise<void> {
  const fail = (error: string): void => emit({ type: 'result', status: 'error', error, usage: { prompt_tokens: 0, completion_tokens: 0 }, requests: 0 });
  let prepared: Prepared;
  try {
    prepared = await prepare(options);
  } catch (error) {
    fail(errorMessage(error));
    return;
  }
  const { store, root, cwd, tools, endpoint } = prepared;
  let conversation: Conversation;
  try {
    conversation = options.resume === null ? store.create(systemPrompt({ cwd, tools, mode: options.mode })) : await store.load(options.resume);
  } catch (error) {
    fail(error instanceof ConversationError ? `cannot resume: ${error.message}` : errorMessage(error));
    return;
  }
  emit({ type: 'session', id: conversation.id });
  if (signal.aborted) {
    emit({ type: 'result', status: 'cancelled', error: 'the turn was cancelled', usage: { prompt_tokens: 0, completion_tokens: 0 }, requests: 0 });
    return;
  }
  await runTurn({
    conversation,
    store,
    input,
    tools,
    endpoint,
    model: options.model,
    maxTurns: options.maxTurns,
    contextTokens: options.contextTokens,
    root,
    cwd,
    signal,
    emit,
  });
}

interface Prepared {
  store: ConversationStore;
  root: string;
  cwd: string;
  tools: ReturnType<typeof createTools>;
  endpoint: ChatEndpoint;
}

async function prepare(options: ExecOptions): Promise<Prepared> {
  const environment = readExecutorSettings();
  const checkout = await locateCheckout(process.cwd());
  const cwd = await realpath(process.cwd());
  const rules = await floorRulesOf(checkout.root);
  // The task's own id is public: the model may see it in `env` or in a path without redaction.
  const known = environment.taskId === null ? [] : [environment.taskId];
  const tools = createTools({ root: checkout.root, ...rules, public: known, mode: options.mode });
  const endpoint = await endpointOf(options, checkout.leasePath, environment.taskId);
  const store = new ConversationStore(conversationDir(environment.stateDir, checkout.root, checkout.localPath));
  return { store, root: checkout.root, cwd, tools, endpoint };
}
