/**
 * The board federated through a real NATS server (Debian's nats-server with JetStream, on a
 * loopback port, started, killed and restarted by the test) — black-box, with the built
 * executable: two clones of one repository, a real client in each, two servers. Covers (issue 24,
 * machines and faults):
 * - presence: each server lists the other clone's peer as `p1@<checkout>`;
 * - the ledger decides: a claim granted on one clone refuses an overlapping exclusive claim on the
 *   other, even when that one had not heard of it yet (the broker refuses the stale append);
 * - a message by name reaches the other clone's agent live;
 * - the broker's clock decides expiry: a clone whose clock is two hours ahead still sees a claim
 *   of 60 s as live;
 * - a clone that dies (kill -9) stops refusing within the presence TTL: its claim shows stale and
 *   an overlapping exclusive claim is granted with a warning;
 * - the broker killed: both clones keep serving at once, claims granted meanwhile are local-only;
 *   the broker back (same port and store): federation resumes within 15 s without a restart, and
 *   the conflict between the two local-only claims is settled by the ledger's order — one kept,
 *   the other withdrawn and its agent told;
 * - a clone started while the broker is down serves at once (its claims local-only, the board
 *   unreachable) and joins when the broker comes up;
 * - a server whose broker has gone still ends when its client leaves (stdin closed), without a
 *   signal, as every server does.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAIM_METHOD, MESSAGE_METHOD, joinPeer, refusalOf, waitForNotice, type ClaimView, type ClaimsAnswer, type Granted, type MessageView, type Peer } from '../helpers/coordination.js';
import { git, makeTempDir } from '../helpers/fixture-repo.js';
import { NatsServer } from '../helpers/nats.js';
import { SHARED_LAYER, Scene, initializeBody, peersVia, toolOutput } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

const FILES: Readonly<Record<string, string>> = { ...SHARED_LAYER, 'src/b.ts': 'export const b = 2;\n', 'docs/guide.md': '# Guide\n' };
/** A short presence TTL keeps the dead-clone case fast; the default (30 s) is checked in tests/unit/board/replica.test.ts. */
const TTL_MS = 3_000;

interface Federated {
  nats: NatsServer;
  a: Peer;
  b: Peer;
  /** Each clone's label as the other sees it. */
  labelA: string;
  labelB: string;
}

/** A repository, a clone of it, a broker, and an agent in each clone, each seeing the other. */
async function federate(scene: Scene, envB: Record<string, string> = {}): Promise<Federated> {
  const nats = await NatsServer.start();
  scene.defer(() => nats.stop());
  const repo = await scene.repo({ files: FILES });
  const parent = await makeTempDir('majordomus-clone-');
  scene.defer(() => parent.cleanup());
  const clone = join(parent.path, 'clone');
  await git(parent.path, ['clone', '-q', repo.root, clone]);
  const env = { MAJORDOMUS_FEDERATION_URL: nats.url, MAJORDOMUS_PRESENCE_TTL_MS: String(TTL_MS) };
  const a = await joinPeer(scene, repo.root, 'agent-a', { env });
  const b = await joinPeer(scene, clone, 'agent-b', { env: { ...env, ...envB } });
  const labelA = await otherLabel(b);
  const labelB = await otherLabel(a);
  return { nats, a, b, labelA, labelB };
}

async function otherLabel(peer: Peer): Promise<string> {
  const other = await waitFor(async () => (await peersVia(peer.client)).peers.find((p) => p.id.startsWith('p1@')), { what: `${peer.name} to see the other clone` });
  return other.id.slice('p1@'.length);
}

const claimsOf = async (peer: Peer): Promise<ClaimView[]> => (await toolOutput<ClaimsAnswer>(peer.client, 'majordomus_claims')).claims;

describe('the board federated through NATS JetStream', () => {
  let scene: Scene;

  afterEach(async () => {
    await scene.cleanup();
  });

  it('shares claims, messages and presence between clones, on the broker\'s clock, and lets a dead clone\'s claims go stale', async () => {
    scene = new Scene();
    const { a, b, labelA, labelB } = await federate(scene, { MAJORDOMUS_CLOCK_SKEW_MS: String(2 * 3600_000) });
    expect(labelA).not.toBe(labelB);

    // B, two hours ahead, is refused a claim of 60 s that A was granted: expiry is the broker's.
    const granted = await toolOutput<Granted>(a.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'refactor b', ttl_seconds: 60 });
    expect(granted.claim.local_only).toBeUndefined();
    const refused = await refusalOf(b.client, 'majordomus_claim', { paths: ['src'], intent: 'touch src' });
    expect(refused.code).toBe('conflict');
    expect(refused.message).toContain(`p1@${labelA} ("agent-a") holds src/b.ts exclusively for "refactor b" (claim c1@${labelA})`);
    expect(await claimsOf(b)).toEqual([expect.objectContaining({ id: `c1@${labelA}`, live: true, where: expect.objectContaining({ checkout: labelA }) })]);

    // A message by name crosses the broker, live.
    await toolOutput(b.client, 'majordomus_send_message', { to: [`p1@${labelA}`], body: 'after you' });
    const pushed = await waitForNotice<{ message: MessageView }>(a, MESSAGE_METHOD, (params) => params.message.body === 'after you');
    expect(pushed.message).toMatchObject({ from: `p1@${labelB}`, to: ['p1'] });

    // B holds a claim, then dies: within the TTL its claim is stale on A, and only warns.
    await toolOutput<Granted>(b.client, 'majordomus_claim', { paths: ['docs/guide.md'], intent: 'rewrite the guide' });
    await waitFor(async () => (await claimsOf(a)).find((c) => c.id === `c1@${labelB}` && c.live), { what: 'A to see B\'s claim' });
    const killedAt = Date.now();
    process.kill(b.pid, 'SIGKILL');
    const stale = await waitFor(async () => (await claimsOf(a)).find((c) => c.id === `c1@${labelB}` && !c.live), { what: 'B\'s claim to go stale on A', timeoutMs: 60_000, intervalMs: 200 });
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    expect(stale.where?.checkout).toBe(labelB);
    const overStale = await toolOutput<Granted>(a.client, 'majordomus_claim', { paths: ['docs'], intent: 'fix the docs' });
    expect(overStale.warnings).toEqual([expect.objectContaining({ claim: `c1@${labelB}`, live: false })]);
  });

  it('serves alone while the broker is down, resumes within 15 s when it is back, and settles conflicting local-only claims by the ledger', async () => {
    scene = new Scene();
    const { nats, a, b, labelA, labelB } = await federate(scene);

    await nats.kill();
    const startedAt = Date.now();
    const onA = await toolOutput<Granted>(a.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'a edits b' });
    const onB = await toolOutput<Granted>(b.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'b edits b' });
    expect(Date.now() - startedAt, 'both answered at once, without the broker').toBeLessThan(5_000);
    expect([onA.claim.local_only, onB.claim.local_only]).toEqual([true, true]);

    await nats.restart();
    const backAt = Date.now();
    // One of the two keeps src/b.ts, confirmed by the ledger; the other is withdrawn, its agent told.
    const settled = await waitFor(
      async () => {
        const [listA, listB] = await Promise.all([claimsOf(a), claimsOf(b)]);
        const all = [...listA, ...listB];
        if (all.some((c) => c.local_only)) return null;
        if (listA.length !== 1 || listB.length !== 1 || listA[0]?.paths[0] !== 'src/b.ts') return null;
        return { listA, listB };
      },
      { what: 'the two clones to settle src/b.ts', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(Date.now() - backAt, 'federation resumed within 15 s').toBeLessThan(15_000);
    const aKept = settled.listA[0]?.id === onA.claim.id;
    const [loser, winnerSeenByLoser] = aKept ? [b, `${onA.claim.id}@${labelA}`] : [a, `${onB.claim.id}@${labelB}`];
    expect((aKept ? settled.listB : settled.listA)[0]).toMatchObject({ id: winnerSeenByLoser, live: true, exclusive: true });
    const withdrawn = await waitForNotice<{ event: string; claim: ClaimView }>(loser, CLAIM_METHOD, (params) => params.event === 'withdrawn');
    expect(withdrawn.claim).toMatchObject({ id: (aKept ? onB : onA).claim.id, paths: ['src/b.ts'] });

    // Federated grants go through the ledger again.
    const next = await toolOutput<Granted>(loser.client, 'majordomus_claim', { paths: ['docs/guide.md'], intent: 'the guide instead' });
    expect(next.claim.local_only).toBeUndefined();
  });

  it('starts serving at once with the broker down, and joins the board when it comes up', async () => {
    scene = new Scene();
    const nats = await NatsServer.start();
    scene.defer(() => nats.stop());
    await nats.kill();
    const repo = await scene.repo({ files: FILES });
    const a = await joinPeer(scene, repo.root, 'agent-a', { env: { MAJORDOMUS_FEDERATION_URL: nats.url, MAJORDOMUS_PRESENCE_TTL_MS: String(TTL_MS) } });
    const early = await toolOutput<Granted>(a.client, 'majordomus_claim', { paths: ['src/b.ts'], intent: 'before the broker' });
    expect(early.claim.local_only).toBe(true);
    expect(await toolOutput(a.client, 'majordomus_checkouts')).toMatchObject({ shared: true, transport: 'federation', reachable: false });
    await nats.restart();
    await waitFor(async () => (await claimsOf(a)).every((c) => c.local_only === undefined), { what: 'the early claim to reach the ledger', timeoutMs: 15_000, intervalMs: 100 });
    expect(await toolOutput(a.client, 'majordomus_checkouts')).toMatchObject({ reachable: true });
  });

  it('ends when its client leaves while the broker is gone, without being signalled', async () => {
    scene = new Scene();
    const nats = await NatsServer.start();
    scene.defer(() => nats.stop());
    const repo = await scene.repo({ files: FILES });
    const raw = scene.raw(repo.root, ['mcp', '--http-port', '0'], { MAJORDOMUS_FEDERATION_URL: nats.url });
    expect(await raw.exchange(initializeBody('agent-a', 1), 1)).toContain('"result"');
    await waitFor(() => /is reachable/.test(raw.stderr()), { what: 'the board to be reachable' });
    await nats.kill();
    await waitFor(() => /is out of reach/.test(raw.stderr()), { what: 'the server to see the broker gone' });
    const closedAt = Date.now();
    // stop() closes stdin and signals only if the process is still there after the grace.
    await raw.cli.stop(10_000);
    expect(await raw.cli.exited).toEqual({ code: 0, signal: null });
    expect(raw.stderr()).not.toMatch(/SIGTERM received/);
    expect(Date.now() - closedAt).toBeLessThan(10_000);
  });
});
