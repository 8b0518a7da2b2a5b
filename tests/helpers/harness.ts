/**
 * What the harness black-box suites share: fixture layers with agent profiles that run the fake
 * agent (tests/fixtures/harness/fake-agent.mjs, which impersonates every vendor's CLI), the tool
 * calls of the harness through an SDK client (answers and refusals), the fake's invocation log,
 * and the session's processes as /proc sees them.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';
import { makeTempDir } from './fixture-repo.js';
import type { Scene } from './shared.js';
import { waitFor } from './wait.js';

/** The fake agent CLI: an executable script, run as a profile's `command`. */
export const FAKE_AGENT = fileURLToPath(new URL('../fixtures/harness/fake-agent.mjs', import.meta.url));

export const AGENTS = ['claude', 'codex', 'gemini', 'opencode', 'executor'] as const;
export type Agent = (typeof AGENTS)[number];

/** Where a checkout's sessions live, relative to its root (default manifest). */
export const HARNESS_RELATIVE = '.ai/local/state/harness';

export interface ProfileSpec {
  agent: Agent;
  /** `harness.enabled`; default true. */
  enabled?: boolean;
  /** The executable; default the fake agent; null leaves `command` out (the vendor's default on PATH). */
  command?: string | null;
  /** Added to `FAKE_AGENT_VENDOR: <agent>`. */
  env?: Record<string, string>;
  cwd?: string;
  args?: string[];
  model?: string;
  effort?: string;
  mode?: string;
  /** The modes a spawn or send may ask for besides narrowing the profile's own. */
  allowed_modes?: string[];
  description?: string;
}

export interface HarnessLayer {
  profiles: Record<string, ProfileSpec>;
  /** The policy's `harness:` object, when the test needs limits, scope or a default profile. */
  policy?: Record<string, unknown>;
  /** The policy's `permissions.deny` globs. */
  deny?: string[];
  files?: Record<string, string>;
}

/** The fixture files of a layer with these profiles (YAML written as JSON, which YAML reads). */
export function harnessFiles(layer: HarnessLayer): Record<string, string> {
  const files: Record<string, string> = { 'src/index.ts': 'export const answer = 42;\n', ...(layer.files ?? {}) };
  for (const [id, spec] of Object.entries(layer.profiles)) {
    const { enabled = true, command, env, agent, ...rest } = spec;
    const profile = {
      id,
      agent,
      ...(command === null ? {} : { command: command ?? FAKE_AGENT }),
      env: { FAKE_AGENT_VENDOR: agent, ...(env ?? {}) },
      ...rest,
      harness: { enabled },
    };
    files[`.ai/repo/profiles/${id}.yaml`] = `${JSON.stringify(profile, null, 2)}\n`;
  }
  if (layer.policy !== undefined || layer.deny !== undefined) {
    const policy = {
      ...(layer.deny === undefined ? {} : { permissions: { deny: layer.deny } }),
      ...(layer.policy === undefined ? {} : { harness: layer.policy }),
    };
    files['.ai/repo/policy.yaml'] = `${JSON.stringify(policy, null, 2)}\n`;
  }
  return files;
}

/** A scratch directory outside the checkout (the fake's log, its grandchild's pid file), removed at the end. */
export async function scratchDir(scene: Scene): Promise<string> {
  const dir = await makeTempDir('majordomus-harness-scratch-');
  scene.defer(() => dir.cleanup());
  return dir.path;
}

// ---------------------------------------------------------------------------------------------
// Tool calls

export interface ToolResult {
  isError: boolean;
  text: string;
  structured: any;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}, timeout = 120_000): Promise<ToolResult> {
  const result = (await client.callTool({ name, arguments: args }, undefined, { timeout })) as {
    isError?: boolean;
    content?: Array<{ type: string; text?: string }>;
    structuredContent?: unknown;
  };
  return {
    isError: result.isError ?? false,
    text: (result.content ?? []).map((c) => c.text ?? '').join('\n'),
    structured: result.structuredContent,
  };
}

/** A tool's structured answer; a refusal fails the test with its text. */
export async function answer<T = any>(client: Client, tool: string, args: Record<string, unknown> = {}, timeout?: number): Promise<T> {
  const result = await callTool(client, `majordomus_${tool}`, args, timeout);
  expect(result.isError, result.text).toBe(false);
  return result.structured as T;
}

/** A tool's refusal text; an answer fails the test. */
export async function refusal(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await callTool(client, `majordomus_${tool}`, args);
  expect(result.isError, `expected ${tool} to be refused, got ${JSON.stringify(result.structured)}`).toBe(true);
  expect(result.structured).toBeUndefined();
  return result.text;
}

export interface Outcome {
  /** The wire code of a refusal (its text is `code: message`), or null for an answer. */
  code: string | null;
  text: string;
  structured: any;
}

/**
 * A tool's answer or refusal, whichever it is (never fails the test): for soft assertions over
 * many calls, where the first unexpected answer must not hide the others.
 */
export async function outcome(client: Client, tool: string, args: Record<string, unknown> = {}, timeout?: number): Promise<Outcome> {
  const result = await callTool(client, `majordomus_${tool}`, args, timeout);
  if (!result.isError) return { code: null, text: result.text, structured: result.structured };
  return { code: /^([a-z_]+):/.exec(result.text)?.[1] ?? result.text, text: result.text, structured: undefined };
}

export interface SessionStatus {
  session: string;
  status: 'running' | 'exited' | 'killed' | 'steered' | 'lost';
  turn: number;
  turnFinished: boolean;
  transcriptBytes: number;
  hasResult: boolean;
  exitCode?: number;
  turns: Array<{ turn: number; status: string; exitCode?: number }>;
}

export function status(client: Client, session: string): Promise<SessionStatus> {
  return answer<SessionStatus>(client, 'session_status', { session });
}

/** Waits (bounded) until the session's latest turn is no longer running; answers its status. */
export function waitForTurnEnd(client: Client, session: string, timeoutMs = 60_000): Promise<SessionStatus> {
  return waitFor(
    async () => {
      const now = await status(client, session);
      return now.status === 'running' ? null : now;
    },
    { what: `session ${session} to end its turn`, timeoutMs, intervalMs: 100 },
  );
}

/** The text of a resource through the SDK client. */
export async function resourceText(client: Client, uri: string): Promise<{ text: string; mimeType: string | undefined }> {
  const { contents } = await client.readResource({ uri });
  expect(contents).toHaveLength(1);
  const content = contents[0] as { text?: string; mimeType?: string; uri: string };
  expect(content.uri).toBe(uri);
  return { text: content.text ?? '', mimeType: content.mimeType };
}

/** Transcript lines parsed. */
export interface TranscriptLine {
  at: string;
  kind: string;
  text?: string;
  event: any;
}

export function parseLines(lines: readonly string[]): TranscriptLine[] {
  return lines.map((line) => JSON.parse(line) as TranscriptLine);
}

/** Every line of a session from `cursor` on, paging until nextCursor is absent; answers the pages. */
export async function readAll(client: Client, session: string, cursor: string): Promise<string[][]> {
  const pages: string[][] = [];
  let next: string | undefined = cursor;
  while (next !== undefined) {
    const read: { lines: string[]; nextCursor?: string } = await answer(client, 'session_read', { session, cursor: next });
    pages.push(read.lines);
    next = read.nextCursor;
    if (pages.length > 1000) throw new Error('session_read never ended its cursor');
  }
  return pages;
}

// ---------------------------------------------------------------------------------------------
// The fake agent's log and processes

/** One invocation of the fake agent, as it logged it (FAKE_AGENT_LOG). */
export interface Invocation {
  vendor: string;
  pid: number;
  argv: string[];
  cwd: string;
  stdin: string;
  env: string[];
  depth: string | null;
  prompt: string;
  resumeId: string | null;
  sessionId: string | null;
  model: string | null;
  mode: string | null;
}

export async function invocations(log: string): Promise<Invocation[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Invocation);
}

/** Waits (bounded) until the log holds `count` invocations; answers them. */
export function waitForInvocations(log: string, count: number, timeoutMs = 30_000): Promise<Invocation[]> {
  return waitFor(
    async () => {
      const found = await invocations(log);
      return found.length >= count ? found : null;
    },
    { what: `${count} invocations in ${log}`, timeoutMs, intervalMs: 50 },
  );
}

/** A pid written to a file (the fake's grandchild), once it is there. */
export function waitForPidFile(path: string, timeoutMs = 30_000): Promise<number> {
  return waitFor(
    () => {
      try {
        const pid = Number(readFileSync(path, 'utf8'));
        return Number.isInteger(pid) && pid > 0 ? pid : null;
      } catch {
        return null;
      }
    },
    { what: `a pid in ${path}`, timeoutMs, intervalMs: 25 },
  );
}

/** Whether /proc still has the process (a zombie counts as gone: it runs nothing). */
export function procAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Waits (bounded) until none of the pids is alive; answers how long it took. */
export async function waitForGone(pids: readonly number[], timeoutMs: number, what = 'the processes'): Promise<number> {
  const started = Date.now();
  await waitFor(() => pids.every((pid) => !procAlive(pid)), { what: `${what} (${pids.join(', ')}) to be gone`, timeoutMs, intervalMs: 20 });
  return Date.now() - started;
}

/** The session's directory, absolute. */
export function sessionDir(root: string, session: string): string {
  return join(root, HARNESS_RELATIVE, session);
}
