/**
 * The permission floor seen from the model endpoint — black-box: a task whose scripted model asks
 * for secrets every way it can (read_file, grep, glob, bash `cat .env`, `cat .e*`,
 * `grep -r SECRET .`, an id_ed25519 under a subdirectory, a path built at run time); the
 * recorded requests that reached the model server never hold a secret, and each refusal is in the
 * task's transcript.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startModelApi, type ScriptedReply } from '../helpers/model-api.js';
import { Scene } from '../helpers/shared.js';
import { eventsOf, EXECUTOR_PROFILE, task, transcriptOf, writeGatewayConfig } from '../helpers/tasks.js';

const ENV_SECRET = 'abc123-very-secret-value';
const KEY_SECRET = 'c2VjcmV0a2V5bWF0ZXJpYWwwMTIzNDU2Nzg5';

describe('the permission floor, as the model endpoint sees it', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('never sends a protected file\'s content to the model, whatever the model asks, and records each refusal', async () => {
    const asks: Array<{ name: string; input: Record<string, unknown> }> = [
      { name: 'read_file', input: { path: '.env' } },
      { name: 'grep', input: { pattern: 'SECRET' } },
      { name: 'glob', input: { pattern: '.e*' } },
      { name: 'bash', input: { command: 'cat .env' } },
      { name: 'bash', input: { command: 'cat .e*' } },
      { name: 'bash', input: { command: 'grep -r SECRET .' } },
      { name: 'read_file', input: { path: 'deep/keys/id_ed25519' } },
      { name: 'bash', input: { command: 'cat deep/keys/id_ed25519' } },
      { name: 'bash', input: { command: 'cat "$(printf \'.%s\' env)"' } },
      { name: 'bash', input: { command: 'find . -name "id_*" -not -path "./.git/*" -exec cat {} +' } },
    ];
    const replies: ScriptedReply[] = [...asks.map((ask) => ({ kind: 'tool_call' as const, ...ask })), { kind: 'text', text: 'I looked everywhere.' }];
    const api = await startModelApi({ replies, models: ['cheap-1'] });
    scene.defer(() => api.stop());
    const repo = await scene.repo({
      files: {
        '.ai/repo/profiles/executor.yaml': EXECUTOR_PROFILE,
        '.env': `SECRET=${ENV_SECRET}\n`,
        '.env.example': 'SECRET=put-yours-here\n',
        'deep/keys/id_ed25519': `-----BEGIN OPENSSH PRIVATE KEY-----\n${KEY_SECRET}\n-----END OPENSSH PRIVATE KEY-----\n`,
        'notes.md': 'the SECRET word is allowed in ordinary files\n',
      },
    });
    await writeGatewayConfig(repo.root, { scripted: { api, models: ['cheap-1'] } });
    const owner = await scene.client(repo.root);

    const state = await task(owner.client, 'run_task', { task: 'Find every credential in this repository and show it to me.', wait: true, timeout_seconds: 170 }, 200_000);
    expect(state.status, JSON.stringify(state)).toBe('completed');
    expect(api.modelRequests).toHaveLength(asks.length + 1);

    const sent = JSON.stringify(api.requests.map((request) => request.body));
    expect(sent).not.toContain(ENV_SECRET);
    expect(sent).not.toContain(KEY_SECRET);
    // Ordinary files still reach the model: the floor is not a blanket refusal.
    expect(sent).toContain('the SECRET word is allowed in ordinary files');

    const results = eventsOf(await transcriptOf(repo.root, state.task_id), 'tool_result');
    expect(results).toHaveLength(asks.length);
    const refused = (index: number): unknown => results[index]?.refused;
    for (const index of [0, 3, 4, 6, 7]) expect(refused(index), `${asks[index]!.name} ${JSON.stringify(asks[index]!.input)}`).toEqual(expect.any(String));
    for (const result of results) expect(JSON.stringify(result)).not.toContain(ENV_SECRET);
  });
});
