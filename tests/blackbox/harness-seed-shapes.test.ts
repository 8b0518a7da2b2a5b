/**
 * Prompts and profiles written for hyprpilot's harness carry over — black-box, with the built
 * executable in temporary git repositories whose profiles run the fake agent CLI. Covers:
 * - hierarchical profile ids: `team/claude-worker` lives in `profiles/team/claude-worker.yaml`,
 *   is listed, spawned and read as `majordomus://profile/team/claude-worker`; a family is scoped
 *   with a glob (`personal/*`);
 * - `with_config` as hyprpilot takes it, a list of overlays folded in order (the later wins),
 *   and as one object; a key beyond model, effort and mode in any overlay is refused;
 * - no ceiling on live sessions unless the policy sets one: ten run at once;
 * - `wait` without `timeout_seconds` answers after 45 s, the turn still running.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, harnessFiles, invocations, refusal, resourceText, scratchDir, waitForInvocations } from '../helpers/harness.js';
import { Scene } from '../helpers/shared.js';

describe('the seed\'s shapes', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('lists, spawns and reads a profile with a hierarchical id, and scopes a family with a glob', async () => {
    const repo = await scene.repo({
      files: harnessFiles({
        profiles: { 'team/claude-worker': { agent: 'claude' }, 'personal/engineer': { agent: 'codex' }, solo: { agent: 'gemini' } },
        policy: { exclude_profiles: ['personal/*'] },
      }),
    });
    const owner = await scene.client(repo.root);
    expect((await answer(owner.client, 'list_profiles')).profiles.map((p: { id: string }) => p.id)).toEqual(['solo', 'team/claude-worker']);
    const spawned = await answer(owner.client, 'spawn', { profile: 'team/claude-worker', prompt: 'answer:from the family', wait: true });
    expect(spawned).toMatchObject({ profile: 'team/claude-worker', exitCode: 0, answer: 'from the family' });
    expect(await refusal(owner.client, 'spawn', { profile: 'personal/engineer', prompt: 'hi' })).toContain('profile "personal/engineer" is outside the policy\'s harness scope');
    const object = await resourceText(owner.client, 'majordomus://profile/team/claude-worker');
    expect(object.text).toContain('"id": "team/claude-worker"');
  });

  it('takes with_config as a list of overlays, the later winning, and as one object; refuses any other key', async () => {
    const log = join(await scratchDir(scene), 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude', model: 'base', env: { FAKE_AGENT_LOG: log } } } }) });
    const owner = await scene.client(repo.root);
    const listed = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'answer:a', wait: true, with_config: [{ model: 'm1', effort: 'low' }, { model: 'm2' }, { effort: 'high' }] });
    expect(listed.sessionInfo).toMatchObject({ model: 'm2', effort: 'high' });
    const single = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'answer:b', wait: true, with_config: { model: 'm3' } });
    expect(single.sessionInfo).toMatchObject({ model: 'm3' });
    const [first, second] = await waitForInvocations(log, 2);
    expect(first?.model).toBe('m2');
    expect(first?.argv).toEqual(expect.arrayContaining(['--effort', 'high']));
    expect(second?.model).toBe('m3');
    expect(await refusal(owner.client, 'spawn', { profile: 'worker', prompt: 'c', with_config: [{ model: 'm4' }, { command: '/bin/sh', env: 'X=1' }] })).toContain(
      'with_config may set only model, effort and mode; remove "command", "env"',
    );
    expect(await invocations(log)).toHaveLength(2);
  });

  it('runs ten sessions at once when the policy sets no ceiling', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'codex' } } }) });
    const owner = await scene.client(repo.root);
    const spawned = [];
    for (let i = 0; i < 10; i += 1) spawned.push(await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000' }));
    const live = (await answer(owner.client, 'session_list')).sessions.filter((s: { status: string }) => s.status === 'running');
    expect(live).toHaveLength(10);
    for (const { session } of spawned) await answer(owner.client, 'session_kill', { session });
  });

  it('answers a wait without timeout_seconds after 45 s, under the 60 s at which clients give up, the turn still running', async () => {
    const repo = await scene.repo({ files: harnessFiles({ profiles: { worker: { agent: 'claude' } } }) });
    const owner = await scene.client(repo.root);
    const started = Date.now();
    const waited = await answer(owner.client, 'spawn', { profile: 'worker', prompt: 'sleep:600000', wait: true });
    const seconds = (Date.now() - started) / 1000;
    expect(waited).toMatchObject({ status: 'running', timedOut: true });
    expect(seconds).toBeGreaterThanOrEqual(44.5);
    expect(seconds).toBeLessThan(58);
    await answer(owner.client, 'session_kill', { session: waited.session });
  }, 120_000);
});
