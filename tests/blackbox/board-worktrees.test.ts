/**
 * One board for every worktree of a repository on one machine — black-box, with the built
 * executable: a repository and a second worktree of it (`git worktree add`), a real client in
 * each, so two servers, each the owner of its own checkout. Covers (issue 24, worktrees):
 * - each server lists the other worktree's peer as `p1@<checkout>`, with its worktree and branch,
 *   and the other worktree among the checkouts sharing the board (`majordomus_checkouts`);
 * - a claim granted in worktree A refuses an overlapping exclusive claim in worktree B, naming
 *   A's peer; claim paths are the same in both (relative to the root), and both list the claim;
 * - a message by name across worktrees reaches the other agent live and sits in its inbox;
 * - the git guard in worktree B refuses a commit touching A's exclusive claim — with B's server
 *   running, and with none (it then asks A's, and says so);
 * - when A's agent leaves, its claims go with it and B may claim the path;
 * - with `MAJORDOMUS_BOARD=checkout` the worktrees stay apart (today's behaviour).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../helpers/cli.js';
import { CLAIM_METHOD, MESSAGE_METHOD, joinPeer, refusalOf, waitForNotice, type ClaimNotice, type ClaimsAnswer, type Granted, type InboxAnswer, type MessageView, type Sent } from '../helpers/coordination.js';
import { git, makeTempDir } from '../helpers/fixture-repo.js';
import { SHARED_LAYER, Scene, peersVia, toolOutput } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

const FILES: Readonly<Record<string, string>> = { ...SHARED_LAYER, 'src/b.ts': 'export const b = 2;\n' };
const IDENTITY = ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false'];

/** A repository and a second worktree of it on the branch `feature`. */
async function twoWorktrees(scene: Scene): Promise<{ a: string; b: string }> {
  const repo = await scene.repo({ files: FILES });
  const parent = await makeTempDir('majordomus-worktree-');
  scene.defer(() => parent.cleanup());
  const b = join(parent.path, 'feature');
  await git(repo.root, ['worktree', 'add', '-q', '-b', 'feature', b]);
  return { a: repo.root, b };
}

function gitCommit(cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...IDENTITY, 'commit', '-q', '-m', 'touch b'], { cwd, env: cliEnv({ MAJORDOMUS_GUARD: undefined, MAJORDOMUS_PEER: undefined }) });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.end();
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

describe('one board for the worktrees of a repository', () => {
  let scene: Scene;

  afterEach(async () => {
    await scene.cleanup();
  });

  it('shares peers, claims, messages and the guard between two worktrees, each serving its own layer', async () => {
    scene = new Scene();
    const { a, b } = await twoWorktrees(scene);
    const agentA = await joinPeer(scene, a, 'agent-a');
    const agentB = await joinPeer(scene, b, 'agent-b');
    expect([agentA.id, agentB.id]).toEqual(['p1', 'p1']);

    // Each sees the other's peer, named by its checkout, with the worktree's branch.
    const seenByB = await waitFor(async () => (await peersVia(agentB.client)).peers.find((p) => p.id.startsWith('p1@')), { what: 'B to list A\'s peer' });
    expect(seenByB).toMatchObject({ client: { name: 'agent-a' }, where: { branch: expect.stringMatching(/^(main|master)$/) } });
    const labelA = seenByB.id.slice('p1@'.length);
    const seenByA = await waitFor(async () => (await peersVia(agentA.client)).peers.find((p) => p.id.startsWith('p1@')), { what: 'A to list B\'s peer' });
    expect(seenByA).toMatchObject({ client: { name: 'agent-b' }, where: { branch: 'feature', checkout: expect.stringMatching(/^feature-[0-9a-f]{4}$/) } });

    // B lists A's worktree among the checkouts sharing the board, alive, with its peer.
    const board = await toolOutput<{ shared: boolean; transport: string; reachable: boolean; you: { branch: string }; checkouts: Array<Record<string, unknown>> }>(agentB.client, 'majordomus_checkouts');
    expect(board).toMatchObject({ shared: true, transport: 'worktrees', reachable: true, you: { branch: 'feature' } });
    expect(board.checkouts).toEqual([expect.objectContaining({ checkout: labelA, branch: seenByB.where?.branch, live: true, peers: 1, sessions: [] })]);

    // A claims; B is refused, naming A's peer; both list the same claim at the same path.
    const granted = await toolOutput<Granted>(agentA.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'refactor b' });
    expect(granted.claim).toMatchObject({ id: 'c1', peer: 'p1', paths: ['src/b.ts'] });
    expect(granted.claim.where, 'a claim of this checkout says no where').toBeUndefined();
    const refused = await refusalOf(agentB.client, 'majordomus_claim', { paths: [join(b, 'src')], intent: 'touch src' });
    expect(refused.code).toBe('conflict');
    expect(refused.message).toContain(`p1@${labelA} ("agent-a") holds src/b.ts exclusively for "refactor b" (claim c1@${labelA})`);
    const listedByB = await toolOutput<ClaimsAnswer>(agentB.client, 'majordomus_claims');
    expect(listedByB.claims).toEqual([
      expect.objectContaining({ id: `c1@${labelA}`, peer: `p1@${labelA}`, live: true, paths: ['src/b.ts'], exclusive: true, where: expect.objectContaining({ checkout: labelA, branch: seenByB.where?.branch }) }),
    ]);

    // A shared claim of B's is granted with a warning, and A is told live.
    await toolOutput<Granted>(agentB.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'read b', exclusive: false, proceed: true });
    const told = await waitForNotice<ClaimNotice>(agentA, CLAIM_METHOD, (params) => params.claim.peer === seenByA.id);
    expect(told.overlaps).toEqual([{ yours: 'src/b.ts', theirs: 'src/b.ts' }]);

    // A message by name crosses the worktrees, live and into the inbox.
    const sent = await toolOutput<Sent>(agentB.client, 'majordomus_send_message', { to: [`p1@${labelA}`], body: 'may I take src/b.ts after you?' });
    expect(sent.message.to).toEqual([`p1@${labelA}`]);
    const pushed = await waitForNotice<{ message: MessageView }>(agentA, MESSAGE_METHOD, (params) => params.message.body.startsWith('may I'));
    expect(pushed.message).toMatchObject({ from: seenByA.id, to: ['p1'], from_client: { name: 'agent-b' } });
    const inbox = await toolOutput<InboxAnswer>(agentA.client, 'majordomus_inbox');
    expect(inbox.messages.map((m) => m.body)).toEqual(['may I take src/b.ts after you?']);
    // A's reply in the thread B started reaches B in the same thread, as B names it.
    await toolOutput<Sent>(agentA.client, 'majordomus_send_message', { to: [seenByA.id], body: 'yes, in ten minutes', thread: pushed.message.thread });
    const reply = await waitForNotice<{ message: MessageView }>(agentB, MESSAGE_METHOD, (params) => params.message.body.startsWith('yes'));
    expect(reply.message.thread).toBe(sent.message.thread);

    // The guard in worktree B refuses a commit touching A's exclusive claim.
    const installed = await runCli(['guard', 'install'], { cwd: b });
    expect(installed.code, installed.stderr).toBe(0);
    await writeFile(join(b, 'src/b.ts'), 'export const b = 3;\n');
    await git(b, ['add', 'src/b.ts']);
    const commit = await gitCommit(b);
    expect(commit.code, commit.stderr).toBe(1);
    expect(commit.stderr).toContain(`p1@${labelA} ("agent-a") holds src/b.ts exclusively for "refactor b" (claim c1@${labelA})`);

    // With no agent (so no server) in worktree B, its guard asks A's server, which speaks for the board.
    await agentB.close();
    const alone = await gitCommit(b);
    expect(alone.code, alone.stderr).toBe(1);
    expect(alone.stderr).toContain(`no server runs in this worktree; these claims are from the board it shares with the worktree at ${a}`);
    expect(alone.stderr).toContain(`p1@${labelA} ("agent-a") holds src/b.ts exclusively for "refactor b" (claim c1@${labelA})`);

    // A's agent leaves: its claims go with it, and an agent in B may claim the path.
    await agentA.close();
    const agentB2 = await joinPeer(scene, b, 'agent-b2');
    const mine = await toolOutput<Granted>(agentB2.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'now mine' });
    expect(mine.warnings).toEqual([]);
    await runCli(['guard', 'uninstall'], { cwd: b });
  });

  it('keeps each worktree to itself with MAJORDOMUS_BOARD=checkout', async () => {
    scene = new Scene();
    const { a, b } = await twoWorktrees(scene);
    const env = { MAJORDOMUS_BOARD: 'checkout' };
    const agentA = await joinPeer(scene, a, 'agent-a', { env });
    const agentB = await joinPeer(scene, b, 'agent-b', { env });
    await toolOutput<Granted>(agentA.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'refactor b' });
    const granted = await toolOutput<Granted>(agentB.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'also b' });
    expect(granted.warnings).toEqual([]);
    expect((await peersVia(agentB.client)).peers.map((p) => p.id)).toEqual(['p1']);
    expect(await toolOutput(agentB.client, 'majordomus_checkouts')).toEqual({ shared: false, transport: null, reachable: null, you: null, checkouts: [] });
  });
});
