/**
 * What the task (executor) black-box suites share: a checkout nominating the executor profile, a
 * gateway config pointing at scripted OpenAI-compatible servers (tests/helpers/model-api.ts), the
 * task tools through an SDK client, and readers of what the executor wrote.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';
import { runCli } from './cli.js';
import { commitAll, type FixtureRepo } from './fixture-repo.js';
import { callTool, HARNESS_RELATIVE, parseLines, type TranscriptLine } from './harness.js';
import type { ModelApi } from './model-api.js';
import type { Scene } from './shared.js';

/** The executor profile every task suite nominates (the package's own `majordomus exec`). */
export const EXECUTOR_PROFILE = `${JSON.stringify({ id: 'executor', agent: 'executor', harness: { enabled: true } }, null, 2)}\n`;

/**
 * A checkout set up the way a user sets one up: a git repository holding `files`, `majordomus
 * init --no-guard` run in it (its own manifest, no policy file), the executor profile added, and
 * everything committed (the Scene's baseline is taken again).
 */
export async function initialisedCheckout(scene: Scene, files: Readonly<Record<string, string>> = {}): Promise<FixtureRepo> {
  const repo = await scene.repo({ manifest: null, gitignore: false, files });
  const init = await runCli(['init', '--no-guard'], { cwd: repo.root });
  expect(init.code, init.stderr).toBe(0);
  await mkdir(join(repo.root, '.ai/repo/profiles'), { recursive: true });
  await writeFile(join(repo.root, '.ai/repo/profiles/executor.yaml'), EXECUTOR_PROFILE);
  await commitAll(repo.root, 'majordomus init and the executor profile');
  await scene.rebaseline(repo);
  return repo;
}

/** A provider of the gateway config: a scripted server and the models it serves. */
export interface ProviderSpec {
  api?: ModelApi;
  /** Instead of a server: a base URL nothing answers on (an unreachable provider). */
  baseUrl?: string;
  models: string[];
  max_concurrent?: number;
  max_queue?: number;
  first_byte_timeout_seconds?: number;
}

/** Writes `.ai/local/executor.yaml` (JSON, which YAML reads) for these providers, in chain order. */
export async function writeGatewayConfig(root: string, providers: Record<string, ProviderSpec>, routing: Record<string, unknown> = {}): Promise<void> {
  const config = {
    providers: Object.fromEntries(
      Object.entries(providers).map(([slug, spec]) => {
        const { api, baseUrl, ...rest } = spec;
        return [slug, { base_url: baseUrl ?? `${api?.url}/v1`, ...rest }];
      }),
    ),
    routing: { priority_models: Object.values(providers).map((p) => ({ model: p.models[0] })), ...routing },
  };
  await mkdir(join(root, '.ai/local'), { recursive: true });
  await writeFile(join(root, '.ai/local/executor.yaml'), `${JSON.stringify(config, null, 2)}\n`);
}

export interface TaskState {
  task_id: string;
  status: string;
  turns: number;
  last_tool?: string;
  question?: string;
  options?: string[];
  token_totals: { prompt_tokens: number; completion_tokens: number };
  result?: string;
  error?: string;
  gateway?: { requests: number; prompt_tokens: number; completion_tokens: number; failovers: number; by_provider: Record<string, unknown> };
}

/** A task tool's structured answer (HermitAgent's names: run_task, check_task…); a refusal fails the test. */
export async function task<T = TaskState>(client: Client, tool: 'run_task' | 'reply_task' | 'check_task' | 'cancel_task', args: Record<string, unknown>, timeout = 180_000): Promise<T> {
  const result = await callTool(client, tool, args, timeout);
  expect(result.isError, result.text).toBe(false);
  return result.structured as T;
}

/** Every transcript line of a task's session, all turns in order, as the harness wrote them to disk. */
export async function transcriptOf(root: string, session: string): Promise<TranscriptLine[]> {
  const turns = join(root, HARNESS_RELATIVE, session, 'turns');
  const numbers = (await readdir(turns)).map(Number).filter(Number.isInteger).sort((a, b) => a - b);
  const lines: string[] = [];
  for (const turn of numbers) {
    const text = await readFile(join(turns, String(turn), 'transcript.jsonl'), 'utf8').catch(() => '');
    lines.push(...text.split('\n').filter((line) => line !== ''));
  }
  return parseLines(lines);
}

/** The executor's own events (the `event` of each transcript line) of one type. */
export function eventsOf(lines: readonly TranscriptLine[], type: string): any[] {
  return lines.map((line) => line.event).filter((event) => event !== null && typeof event === 'object' && event.type === type);
}
