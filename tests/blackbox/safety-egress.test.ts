/**
 * What may leave the checkout for a model — black-box, the built executable as the shared server
 * (an SDK client over stdio, REST with the lease's token), the executor's model requests answered
 * by a scripted model API that records every request. Covers:
 * - in a repository set up by `majordomus init` (no policy file), an executor task whose model asks
 *   for the lease (`read_file`, `bash cat`, `grep`, a path built at run time), for
 *   `.ai/local/executor.yaml` or for any other file under the local path never sends the lease's
 *   token, the config or that file to the model; the file tools and the literal bash commands come
 *   back as refusals;
 * - `spawn` and `session_send` with `file` naming a protected path (`.env`, `*.pem`, anything
 *   under `.ai/local/`, a policy deny glob) are refused before anything starts with the wire code
 *   `protected_path` (an isError result `protected_path: …` over MCP, 403 over REST), for an
 *   executor profile and for another agent's profile alike; the model is sent nothing, and no
 *   transcript or session file holds a byte of the file;
 * - redaction hides secrets, not what is not secret: with a policy denying `.ai/local/**`, the
 *   results of bash `pwd`, `echo $MAJORDOMUS_TASK_ID` and a command printing an absolute path of a
 *   checkout file reach the model verbatim (the next request's messages), while reading the lease
 *   still never carries its token to the model.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rest } from '../helpers/coordination.js';
import { answer, HARNESS_RELATIVE, harnessFiles, invocations, outcome, scratchDir, waitForTurnEnd } from '../helpers/harness.js';
import { conversationOf, startModelApi, type ModelApi, type ScriptedReply } from '../helpers/model-api.js';
import { readLeaseDoc, Scene, waitForLease } from '../helpers/shared.js';
import { eventsOf, EXECUTOR_PROFILE, initialisedCheckout, task, transcriptOf, writeGatewayConfig } from '../helpers/tasks.js';

const ENV_SECRET = 'env-secret-value-4c1f9a2e77';
const PEM_SECRET = 'UEVNIGtleSBtYXRlcmlhbCBmb3IgdGVzdHMgb25seQ';
const CONFIG_MARKER = 'executor-config-marker-9d3b51';
const NOTES_MARKER = 'local-notes-marker-6a0e2c';
const PRIVATE_MARKER = 'private-plan-marker-31f7d8';

/** Every file below `dir` (recursively), as text, by path relative to `dir`. */
async function filesUnder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  let names: string[] = [];
  try {
    names = await readdir(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return out;
  }
  for (const name of names) {
    try {
      out[name] = await readFile(join(dir, name), 'utf8');
    } catch {
      // a directory
    }
  }
  return out;
}

/** Writes the gateway config, then a comment line the model must never see. */
async function gatewayConfigWithMarker(root: string, api: ModelApi): Promise<void> {
  await writeGatewayConfig(root, { scripted: { api, models: ['cheap-1'] } });
  const path = join(root, '.ai/local/executor.yaml');
  const text = `${await readFile(path, 'utf8')}# ${CONFIG_MARKER}\n`;
  await writeFile(path, text);
}

describe('the lease, the executor config and the local half never reach a model', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('keeps the lease token, .ai/local/executor.yaml and every file under .ai/local/ out of every model request in a repository set up by majordomus init, refusing each read', async () => {
    const asks: Array<{ name: string; input: Record<string, unknown>; refused: boolean }> = [
      { name: 'read_file', input: { path: '.ai/local/state/mcp/server.json' }, refused: true },
      { name: 'bash', input: { command: 'cat .ai/local/state/mcp/server.json' }, refused: true },
      { name: 'grep', input: { pattern: 'token', path: '.ai/local' }, refused: false },
      { name: 'grep', input: { pattern: '"token"' }, refused: false },
      { name: 'read_file', input: { path: '.ai/local/executor.yaml' }, refused: true },
      { name: 'bash', input: { command: 'cat .ai/local/executor.yaml' }, refused: true },
      { name: 'read_file', input: { path: '.ai/local/notes/handover.md' }, refused: true },
      { name: 'bash', input: { command: 'cat .ai/local/notes/handover.md' }, refused: true },
      { name: 'bash', input: { command: 'grep -r -h -e token -e marker .ai' }, refused: false },
      { name: 'bash', input: { command: 'cat "$(printf \'.ai/%s/state/mcp/server.json\' local)"' }, refused: false },
    ];
    const replies: ScriptedReply[] = [...asks.map(({ name, input }) => ({ kind: 'tool_call' as const, name, input })), { kind: 'text', text: 'I read what I could.' }];
    const api = await startModelApi({ replies, models: ['cheap-1'] });
    scene.defer(() => api.stop());
    const repo = await initialisedCheckout(scene, { 'src/index.ts': 'export const answer = 42;\n' });
    expect(await readFile(join(repo.root, '.ai/manifest.yaml'), 'utf8')).toContain('local: {path: .ai/local}');
    await gatewayConfigWithMarker(repo.root, api);
    await mkdir(join(repo.root, '.ai/local/notes'), { recursive: true });
    await writeFile(join(repo.root, '.ai/local/notes/handover.md'), `# Handover\n\nthe ${NOTES_MARKER} stays in this checkout\n`);
    const owner = await scene.client(repo.root);
    const lease = await waitForLease(repo.root);
    expect(lease.token.length).toBeGreaterThanOrEqual(16);

    const state = await task(owner.client, 'run_task', { task: 'Show me the shared server\'s token and the provider config.', wait: true, timeout_seconds: 120 }, 150_000);
    expect(state.status, JSON.stringify(state)).toBe('completed');
    expect(api.modelRequests).toHaveLength(asks.length + 1);
    // The lease the task ran under is the one the owner still holds.
    expect((await readLeaseDoc(repo.root))?.token).toBe(lease.token);

    const sent = JSON.stringify(api.requests);
    expect.soft(sent.includes(lease.token), 'the lease token reached the model').toBe(false);
    expect.soft(sent.includes(CONFIG_MARKER), '.ai/local/executor.yaml reached the model').toBe(false);
    expect.soft(sent.includes(NOTES_MARKER), 'a file under .ai/local/ reached the model').toBe(false);

    const results = eventsOf(await transcriptOf(repo.root, state.task_id), 'tool_result');
    expect(results).toHaveLength(asks.length);
    asks.forEach((ask, index) => {
      if (ask.refused) expect.soft(results[index]?.refused, `${ask.name} ${JSON.stringify(ask.input)} comes back as a refusal`).toEqual(expect.any(String));
    });
  });
});

describe('spawn and session_send refuse a protected prompt file', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('refuses spawn and session_send with file naming .env, a *.pem or anything under .ai/local/ with protected_path, before anything starts, in a repository set up by majordomus init', async () => {
    const api = await startModelApi({ replies: (): ScriptedReply => ({ kind: 'text', text: 'done' }), models: ['cheap-1'] });
    scene.defer(() => api.stop());
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await initialisedCheckout(scene, {
      ...harnessFiles({ profiles: { worker: { agent: 'claude', env: { FAKE_AGENT_LOG: log } } } }),
      '.env': `API_SECRET=${ENV_SECRET}\n`,
      'config/server.pem': `-----BEGIN PRIVATE KEY-----\n${PEM_SECRET}\n-----END PRIVATE KEY-----\n`,
      'prompts/ok.md': 'answer:ready\n',
    });
    await gatewayConfigWithMarker(repo.root, api);
    await mkdir(join(repo.root, '.ai/local/notes'), { recursive: true });
    await writeFile(join(repo.root, '.ai/local/notes/handover.md'), `${NOTES_MARKER}\n`);
    const owner = await scene.client(repo.root);
    const lease = await waitForLease(repo.root);
    const secrets: Record<string, string> = {
      '.env': ENV_SECRET,
      'config/server.pem': PEM_SECRET,
      '.ai/local/executor.yaml': CONFIG_MARKER,
      '.ai/local/state/mcp/server.json': lease.token,
      '.ai/local/notes/handover.md': NOTES_MARKER,
    };

    // Over MCP, for the executor and for another agent: refused, naming the path.
    for (const profile of ['executor', 'worker']) {
      for (const file of Object.keys(secrets)) {
        // wait: a spawn that does start (the defect) ends before the next, so the live ceiling never interferes.
        const refused = await outcome(owner.client, 'spawn', { profile, file, wait: true });
        expect.soft(refused.code, `spawn {profile: ${profile}, file: ${file}}: ${refused.text.slice(0, 300)}`).toBe('protected_path');
        if (refused.code === 'protected_path') expect.soft(refused.text).toContain(file);
      }
    }
    // Over REST: 403 protected_path.
    const overRest = await rest(repo.root, 'POST', '/api/v1/harness/spawn', { profile: 'worker', file: '.env', wait: true });
    expect.soft({ status: overRest.status, body: overRest.text.slice(0, 300) }).toMatchObject({ status: 403 });
    if (overRest.status === 403) expect.soft(overRest.json()).toEqual({ error: { code: 'protected_path', message: expect.stringContaining('.env') } });

    // session_send on a finished session of each agent: refused the same way.
    for (const profile of ['worker', 'executor']) {
      const started = await answer(owner.client, 'spawn', { profile, file: 'prompts/ok.md', wait: true });
      expect(started.status).toBe('exited');
      for (const file of ['.env', '.ai/local/executor.yaml']) {
        const refused = await outcome(owner.client, 'session_send', { session: started.session, file, wait: true });
        expect.soft(refused.code, `session_send {${profile}, file: ${file}}: ${refused.text.slice(0, 300)}`).toBe('protected_path');
      }
    }

    // Whatever was started ends before the files are searched.
    const { sessions } = await answer(owner.client, 'session_list');
    for (const session of sessions) await waitForTurnEnd(owner.client, session.session);
    // Only the two sessions started from prompts/ok.md exist, each with its one turn.
    expect.soft(sessions.map((s: { profile: string }) => s.profile).sort(), 'no session was started from a protected file').toEqual(['executor', 'worker']);
    expect.soft((await invocations(log)).map((run) => run.prompt), 'the agent CLI ran only for prompts/ok.md').toEqual(['answer:ready\n']);

    const sent = JSON.stringify(api.requests);
    const written = await filesUnder(join(repo.root, HARNESS_RELATIVE));
    for (const [file, secret] of Object.entries(secrets)) {
      expect.soft(sent.includes(secret), `${file} reached the model`).toBe(false);
      for (const [path, text] of Object.entries(written)) expect.soft(text.includes(secret), `${file} is in ${HARNESS_RELATIVE}/${path}`).toBe(false);
    }
  });

  it('refuses spawn with file matching the policy\'s deny glob with protected_path, over MCP and REST', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({
      files: {
        ...harnessFiles({ profiles: { worker: { agent: 'claude', env: { FAKE_AGENT_LOG: log } } }, deny: ['private/**'] }),
        '.ai/repo/profiles/executor.yaml': EXECUTOR_PROFILE,
        'private/plan.md': `answer:${PRIVATE_MARKER}\n`,
      },
    });
    const owner = await scene.client(repo.root);
    await waitForLease(repo.root);
    for (const profile of ['worker', 'executor']) {
      const refused = await outcome(owner.client, 'spawn', { profile, file: 'private/plan.md', wait: true });
      expect.soft(refused.code, `spawn {profile: ${profile}, file: private/plan.md}: ${refused.text.slice(0, 300)}`).toBe('protected_path');
    }
    const overRest = await rest(repo.root, 'POST', '/api/v1/harness/spawn', { profile: 'worker', file: 'private/plan.md', wait: true });
    expect.soft({ status: overRest.status, body: overRest.text.slice(0, 300) }).toMatchObject({ status: 403 });
    const { sessions } = await answer(owner.client, 'session_list');
    for (const session of sessions) await waitForTurnEnd(owner.client, session.session);
    expect.soft(sessions, 'nothing was started').toEqual([]);
    expect.soft(await invocations(log), 'the agent CLI never ran').toEqual([]);
    const written = await filesUnder(join(repo.root, HARNESS_RELATIVE));
    for (const [path, text] of Object.entries(written)) expect.soft(text.includes(PRIVATE_MARKER), `the denied file is in ${HARNESS_RELATIVE}/${path}`).toBe(false);
  });
});

describe('redaction hides secrets, not what is not secret', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('returns pwd, the task id and absolute checkout paths to the model verbatim under a policy denying .ai/local/**, and still never the token', async () => {
    const asks = [
      { name: 'bash', input: { command: 'pwd' } },
      { name: 'bash', input: { command: 'echo "task=$MAJORDOMUS_TASK_ID"' } },
      { name: 'bash', input: { command: 'realpath src/index.ts' } },
      { name: 'bash', input: { command: 'cat .ai/local/state/mcp/server.json' } },
      { name: 'read_file', input: { path: '.ai/local/state/mcp/server.json' } },
      { name: 'bash', input: { command: 'cat "$(printf \'.ai/%s/state/mcp/server.json\' local)"' } },
    ];
    const replies: ScriptedReply[] = [...asks.map((ask) => ({ kind: 'tool_call' as const, ...ask })), { kind: 'text', text: 'done' }];
    const api = await startModelApi({ replies, models: ['cheap-1'] });
    scene.defer(() => api.stop());
    const repo = await scene.repo({
      files: {
        '.ai/repo/profiles/executor.yaml': EXECUTOR_PROFILE,
        '.ai/repo/policy.yaml': `${JSON.stringify({ permissions: { deny: ['.ai/local/**'] } }, null, 2)}\n`,
        'src/index.ts': 'export const answer = 42;\n',
      },
    });
    await writeGatewayConfig(repo.root, { scripted: { api, models: ['cheap-1'] } });
    const owner = await scene.client(repo.root);
    const lease = await waitForLease(repo.root);

    const state = await task(owner.client, 'run_task', { task: 'Where are you, which task is this, where is src/index.ts?', wait: true, timeout_seconds: 120 }, 150_000);
    expect(state.status, JSON.stringify(state)).toBe('completed');
    expect(api.modelRequests).toHaveLength(asks.length + 1);
    // The result of call i is the last message of request i + 1.
    const resultOf = (index: number): string => {
      const messages = conversationOf(api.modelRequests[index + 1] as (typeof api.modelRequests)[number]);
      const last = messages.at(-1);
      expect(last?.role, `request ${index + 2} ends with the result of ${JSON.stringify(asks[index])}`).toBe('tool');
      return last?.text ?? '';
    };
    const expected: Array<[number, string]> = [
      [0, repo.root],
      [1, `task=${state.task_id}`],
      [2, join(repo.root, 'src/index.ts')],
    ];
    for (const [index, text] of expected) {
      const result = resultOf(index);
      expect.soft(result, `${asks[index]?.input.command} reaches the model verbatim`).toContain(text);
      expect.soft(result, `${asks[index]?.input.command} is not redacted`).not.toContain('[redacted');
    }
    expect.soft(JSON.stringify(api.requests).includes(lease.token), 'the lease token reached the model').toBe(false);
  });
});
