/**
 * What a stdio client's session carries to a new server when its server went away (src/hub/link.ts):
 * the lines the new server must hear first — the client's `initialize`, its
 * `notifications/initialized`, its subscriptions and its last `logging/setLevel`, whose answers go
 * nowhere (the client had its own) — and which messages may be sent again when their first attempt may have run. Imports
 * nothing: the bridge path must start fast.
 */

function messageOf(line: string): { method?: unknown; params?: { uri?: unknown } } | null {
  try {
    return JSON.parse(line) as { method?: unknown; params?: { uri?: unknown } } | null;
  } catch {
    return null;
  }
}

/**
 * Methods that change nothing on a server (or only on the one that just went away): re-sending
 * one whose first attempt may have run is harmless. A tool call is never among them — the bridge
 * cannot know what a tool does.
 */
const SAFE_TO_RESEND = new Set([
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  // Idempotent: subscribing twice is one subscription.
  'resources/subscribe',
  'resources/unsubscribe',
  'logging/setLevel',
]);

/** Whether `line` may be sent to a new server although its first attempt may have run. */
export function safeToResend(line: string): boolean {
  const method = messageOf(line)?.method;
  return typeof method === 'string' && (SAFE_TO_RESEND.has(method) || method.startsWith('notifications/'));
}

export class ClientReplay {
  #initialize: string | null = null;
  #initialized: string | null = null;
  /** The client's `resources/subscribe` lines by URI. */
  readonly #subscriptions = new Map<string, string>();
  /** The client's last `logging/setLevel`: its level holds on the new server too. */
  #logLevel: string | null = null;

  /** Notes a line of the client, if it is one a new server must hear. */
  remember(line: string): void {
    // Most lines are neither; skip the second parse for them (the hot stdio path).
    if (!line.includes('initialize') && !line.includes('subscribe') && !line.includes('setLevel')) return;
    const message = messageOf(line);
    const method = message?.method;
    if (method === 'initialize') this.#initialize = line;
    if (method === 'notifications/initialized') this.#initialized = line;
    if (method === 'logging/setLevel') this.#logLevel = line;
    const uri = message?.params?.uri;
    if (typeof uri !== 'string') return;
    if (method === 'resources/subscribe') this.#subscriptions.set(uri, line);
    if (method === 'resources/unsubscribe') this.#subscriptions.delete(uri);
  }

  /** Whether `line` is the client's `initialize` (a new server keeps the client's peer id with it). */
  isInitialize(line: string): boolean {
    return line === this.#initialize;
  }

  /** What a new server must hear first, in order, but `pending` (the message being handled, which is sent anyway). */
  lines(pending: string | null): string[] {
    return [this.#initialize, this.#initialized, ...this.#subscriptions.values(), this.#logLevel].filter((line): line is string => line !== null && line !== pending);
  }
}
