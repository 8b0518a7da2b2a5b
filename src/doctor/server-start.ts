/**
 * Starts a client's configured command as the client would (in the repository, with the user's
 * environment and the entry's own `env`), sends `initialize` over stdio and times the answer, then
 * closes stdin: the server a client starts ends when its client leaves. When a shared server is
 * already running, the started process bridges to it and the doctor is briefly one more peer —
 * exactly what the client would do; nothing of the running server is disturbed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { ChildEnv } from '../platform/child-env.js';
import type { EntryCommand } from '../init/clients.js';

export type StartResult = { ok: true; ms: number; server: string } | { ok: false; ms: number; why: string };

/** How long a started server may take to end after its stdin closed, before it is signalled. */
const EXIT_GRACE_MS = 10_000;

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'majordomus-doctor', version: '1' } },
};

/** The last lines of what the server said on stderr, for a failure's message. */
function tail(stderr: string): string {
  const lines = stderr.split('\n').map((line) => line.trim()).filter(Boolean);
  const last = lines.slice(-3).join(' | ');
  return last.length > 600 ? `…${last.slice(-600)}` : last;
}

/** The answer to our `initialize` among stdout's complete lines, if it has come. */
function answerIn(lines: readonly string[]): { server: string } | { why: string } | null {
  for (const line of lines) {
    let frame: { id?: unknown; result?: { serverInfo?: { name?: unknown; version?: unknown } }; error?: { message?: unknown } };
    try {
      frame = JSON.parse(line) as typeof frame;
    } catch {
      return { why: `wrote something other than JSON-RPC on stdout: ${line.slice(0, 200)}` };
    }
    if (frame.id !== 1) continue;
    if (frame.error !== undefined) return { why: `answered initialize with an error: ${String(frame.error.message)}` };
    const info = frame.result?.serverInfo;
    return { server: `${String(info?.name ?? 'an unnamed server')} ${String(info?.version ?? '')}`.trim() };
  }
  return null;
}

function signalGroup(child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Ends a started process: one that answered is let go as its client would (stdin closed: a server
 * ends with its last client), one that did not is stopped at once. Either way a process group
 * that lingers (npx's child too) is signalled.
 */
async function stop(child: ChildProcessWithoutNullStreams, exited: Promise<void>, answered: boolean): Promise<void> {
  child.stdin.end();
  const within = (ms: number): Promise<boolean> =>
    Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref())]);
  if (await within(answered ? EXIT_GRACE_MS : 0)) return;
  signalGroup(child, 'SIGTERM');
  if (await within(5_000)) return;
  signalGroup(child, 'SIGKILL');
  await within(5_000);
}

/** Starts `entry` in `cwd`, sends initialize, and answers whether and how fast it answered. */
export async function startAndInitialize(entry: EntryCommand, cwd: string, env: ChildEnv, timeoutMs: number): Promise<StartResult> {
  const started = Date.now();
  const child = spawn(entry.command, entry.args, { cwd, env: { ...env, ...entry.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdin.on('error', () => {});
  let exitCode: number | null = null;
  let exitSignal: NodeJS.Signals | null = null;
  let spawnError: Error | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      spawnError = error;
      resolve();
    });
    child.once('close', (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      resolve();
    });
  });
  const result = await new Promise<StartResult>((resolve) => {
    const settle = (outcome: { server: string } | { why: string }): void => {
      clearTimeout(timer);
      const ms = Date.now() - started;
      resolve('server' in outcome ? { ok: true, ms, server: outcome.server } : { ok: false, ms, why: outcome.why });
    };
    const timer = setTimeout(() => settle({ why: `did not answer initialize within ${Math.round(timeoutMs / 1000)} s${stderr === '' ? '' : `; it said: ${tail(stderr)}`}` }), timeoutMs);
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const answer = answerIn(stdout.split('\n').slice(0, -1));
      if (answer !== null) settle(answer);
    });
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    void exited.then(() => {
      if (spawnError !== null) return settle({ why: `could not be started: ${spawnError.message}` });
      const how = exitSignal === null ? `exited with code ${String(exitCode)}` : `was killed by ${String(exitSignal)}`;
      settle({ why: `${how} before answering initialize${stderr === '' ? '' : `: ${tail(stderr)}`}` });
    });
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  });
  await stop(child, exited, result.ok);
  return result;
}
