/**
 * A spawn never widens a profile's mode — black-box, the built executable as the shared server (an
 * SDK client over stdio, REST with the lease's token) in temporary git repositories whose claude
 * profiles run the fake agent CLI. Claude's modes, narrow to wide: plan < default < acceptEdits <
 * bypassPermissions. Covers:
 * - a profile with `mode: plan`: `spawn` with `mode: bypassPermissions`, with
 *   `with_config: {mode: bypassPermissions}` or with `mode: default` is refused with the wire code
 *   `mode_not_allowed` (an isError result `mode_not_allowed: …` naming the profile's mode; 422 over
 *   REST) and nothing starts; `mode: plan` is accepted and the agent runs with
 *   `--permission-mode plan`; `session_send` with a wider mode is refused the same way;
 * - a profile with `mode: default` and `allowed_modes: [plan, default, acceptEdits]` accepts
 *   `acceptEdits` and `plan` (the argv the session reports says so) and refuses
 *   `bypassPermissions`.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rest } from '../helpers/coordination.js';
import { answer, harnessFiles, invocations, outcome, scratchDir } from '../helpers/harness.js';
import { Scene, waitForLease } from '../helpers/shared.js';

/** The `--permission-mode` a session's argv carries, or null. */
function permissionMode(argv: readonly string[]): string | null {
  const at = argv.indexOf('--permission-mode');
  return at === -1 ? null : (argv[at + 1] ?? null);
}

describe('spawn and session_send never widen a profile\'s mode', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('refuses a wider mode than a plan profile\'s with mode_not_allowed, by mode, by with_config, over REST and on session_send, starting nothing; plan itself runs', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({ files: harnessFiles({ profiles: { planner: { agent: 'claude', mode: 'plan', env: { FAKE_AGENT_LOG: log } } } }) });
    const owner = await scene.client(repo.root);
    await waitForLease(repo.root);

    const wider: Array<Record<string, unknown>> = [
      { mode: 'bypassPermissions' },
      { with_config: { mode: 'bypassPermissions' } },
      { mode: 'acceptEdits' },
      { mode: 'default' },
    ];
    for (const extra of wider) {
      const refused = await outcome(owner.client, 'spawn', { profile: 'planner', prompt: 'answer:should not run', wait: true, ...extra });
      const what = `spawn planner ${JSON.stringify(extra)}: ${refused.text.slice(0, 300)}`;
      expect.soft(refused.code, what).toBe('mode_not_allowed');
      if (refused.code === 'mode_not_allowed') expect.soft(refused.text, what).toContain('plan');
    }
    const overRest = await rest(repo.root, 'POST', '/api/v1/harness/spawn', { profile: 'planner', prompt: 'answer:should not run', mode: 'bypassPermissions', wait: true });
    expect.soft({ status: overRest.status, body: overRest.text.slice(0, 300) }).toMatchObject({ status: 422 });
    if (overRest.status === 422) expect.soft(overRest.json().error.code).toBe('mode_not_allowed');
    expect.soft((await invocations(log)).map((run) => run.mode), 'nothing started for a wider mode').toEqual([]);
    const sessionsBefore = (await answer(owner.client, 'session_list')).sessions;
    expect.soft(sessionsBefore, 'no session was created for a wider mode').toEqual([]);

    // The profile's own mode (a narrowing to itself) is accepted and reaches the CLI.
    const planned = await answer(owner.client, 'spawn', { profile: 'planner', prompt: 'answer:planned', mode: 'plan', wait: true });
    expect(planned).toMatchObject({ status: 'exited', exitCode: 0, answer: 'planned' });
    expect(permissionMode(planned.sessionInfo.argv)).toBe('plan');
    const runs = (await invocations(log)).length;

    const widened = await outcome(owner.client, 'session_send', { session: planned.session, prompt: 'answer:should not run', mode: 'bypassPermissions', wait: true });
    expect.soft(widened.code, `session_send with mode bypassPermissions: ${widened.text.slice(0, 300)}`).toBe('mode_not_allowed');
    expect.soft(await invocations(log), 'session_send started nothing').toHaveLength(runs);
  });

  it('lets a profile with allowed_modes narrow to plan or widen to acceptEdits, and refuses bypassPermissions', async () => {
    const scratch = await scratchDir(scene);
    const log = join(scratch, 'agent.log');
    const repo = await scene.repo({
      files: harnessFiles({
        profiles: { editor: { agent: 'claude', mode: 'default', allowed_modes: ['plan', 'default', 'acceptEdits'], env: { FAKE_AGENT_LOG: log } } },
      }),
    });
    const owner = await scene.client(repo.root);
    await waitForLease(repo.root);

    const listed = await answer(owner.client, 'list_profiles');
    expect.soft(listed.profiles.map((p: { id: string; error?: string }) => ({ id: p.id, error: p.error })), 'the profile with allowed_modes is nominated').toEqual([{ id: 'editor', error: undefined }]);

    for (const mode of ['acceptEdits', 'plan']) {
      const started = await outcome(owner.client, 'spawn', { profile: 'editor', prompt: `answer:${mode}`, mode, wait: true });
      expect.soft(started.code, `spawn editor with mode ${mode}: ${started.text.slice(0, 300)}`).toBeNull();
      if (started.code === null) expect.soft(permissionMode(started.structured.sessionInfo.argv), `the argv of mode ${mode}`).toBe(mode);
    }
    const runs = (await invocations(log)).length;
    const refused = await outcome(owner.client, 'spawn', { profile: 'editor', prompt: 'answer:should not run', mode: 'bypassPermissions', wait: true });
    expect.soft(refused.code, `spawn editor with mode bypassPermissions: ${refused.text.slice(0, 300)}`).toBe('mode_not_allowed');
    if (refused.code === 'mode_not_allowed') {
      expect.soft(refused.text).toContain('default');
      expect.soft(refused.text).toContain('acceptEdits');
    }
    expect.soft(await invocations(log), 'nothing started for bypassPermissions').toHaveLength(runs);
  });
});
