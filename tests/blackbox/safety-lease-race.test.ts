/**
 * A damaged lease never splits the board, whatever the race — black-box, the built executable in
 * temporary git repositories, SDK clients over stdio: the owner's own client, a client that
 * bridged to it before, and newcomers that start while the lease is damaged. Covers, for a lease
 * overwritten with junk bytes and for a deleted one, a few rounds each with seeded delays
 * (tests/helpers/seeded.ts; the seed and the delays are in the test's name):
 * - the damage lands right after one of the owner's lease checks (a first damage is repaired, the
 *   second follows at once), and a newcomer starts after the round's delay, so it may find the
 *   lease damaged before the owner publishes it again;
 * - within 5 s every client of the checkout is on one board: each lists the same peers, every
 *   client once;
 * - an exclusive claim the old owner's client made before the race conflicts with each newcomer's
 *   overlapping claim (refused with `conflict`);
 * - peer ids are never reused: across the claims journal under `.ai/local/coordination/` and the
 *   peers lists, no id names two different clients.
 */
import { rm, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAIMS_JOURNAL, joinPeer, journalLines, waitForJournal, type Peer } from '../helpers/coordination.js';
import { outcome } from '../helpers/harness.js';
import { seeded } from '../helpers/seeded.js';
import { leasePath, peersVia, readLeaseDoc, SHARED_LAYER, Scene, toolOutput, waitForLease, type PeersAnswer } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

/** How long the checkout may take to be on one board again after a newcomer joined. */
const CONVERGE_MS = 5_000;
/** The newcomer's delay after the damage is drawn from [0, MAX_DELAY_MS). */
const MAX_DELAY_MS = 400;
const ROUNDS = 2;

type Damage = (root: string) => Promise<void>;

const damages: Array<{ what: string; damage: Damage; seed: number }> = [
  { what: 'overwritten with junk bytes', damage: (root) => writeFile(leasePath(root), '\u0000\u00ffjunk{not a lease'), seed: 0x5eed01 },
  { what: 'deleted', damage: (root) => rm(leasePath(root), { force: true }), seed: 0x5eed02 },
];

/** The delays of one damage's rounds, from its seed. */
function delaysOf(seed: number): number[] {
  const next = seeded(seed);
  return Array.from({ length: ROUNDS }, () => Math.floor(next() * MAX_DELAY_MS));
}

interface Board {
  /** Each client's name → what it sees. */
  views: Record<string, PeersAnswer>;
  /** Whether every client sees the same peers, each client once, itself among them. */
  one: boolean;
}

async function boardOf(clients: readonly Peer[]): Promise<Board> {
  const views: Record<string, PeersAnswer> = {};
  for (const client of clients) views[client.name] = await peersVia(client.client);
  const listed = (view: PeersAnswer): string =>
    view.peers
      .map((p) => `${p.id}=${p.client.name}`)
      .sort()
      .join(',');
  const first = listed(views[clients[0]?.name as string] as PeersAnswer);
  const names = (views[clients[0]?.name as string] as PeersAnswer).peers.map((p) => p.client.name).sort();
  const one =
    clients.every((client) => listed(views[client.name] as PeersAnswer) === first) &&
    JSON.stringify(names) === JSON.stringify(clients.map((c) => c.name).sort()) &&
    clients.every((client) => (views[client.name] as PeersAnswer).peers.find((p) => p.id === views[client.name]?.you)?.client.name === client.name);
  return { views, one };
}

function describeBoard(board: Board): string {
  return Object.entries(board.views)
    .map(([name, view]) => `${name} (you ${view.you}) sees ${view.peers.map((p) => `${p.id}=${p.client.name}`).join(', ')}`)
    .join('; ');
}

describe('a damaged lease and a newcomer racing the owner', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it.each(damages.map((row) => ({ ...row, delays: delaysOf(row.seed).join(' and ') })))(
    'keeps every client on one board when the lease is $what (seed $seed, delays $delays ms)',
    async ({ damage, seed }) => {
      const delays = delaysOf(seed);
      const repo = await scene.repo({ files: SHARED_LAYER });
      const root = repo.root;
      const owner = await joinPeer(scene, root, 'old-owner');
      await waitForLease(root);
      const bridged = await joinPeer(scene, root, 'bridged');
      const held = await toolOutput(owner.client, 'majordomus_claim', { paths: ['src/owned/**'], intent: 'rewrite the owned module', exclusive: true });
      expect(held.claim.exclusive).toBe(true);
      const clients: Peer[] = [owner, bridged];

      for (const [round, wait] of delays.entries()) {
        // Land the damage right after one of the owner's lease checks: damage once, wait until the
        // lease is repaired (a check just ran), and damage again at once.
        await damage(root);
        await waitForLease(root, () => true, 10_000);
        await damage(root);
        await delay(wait); // the round's seeded place in the race
        const newcomer = await joinPeer(scene, root, `newcomer-${round + 1}`);
        clients.push(newcomer);

        let board: Board = await boardOf(clients);
        await waitFor(
          async () => {
            board = await boardOf(clients);
            return board.one;
          },
          { what: 'every client on one board', timeoutMs: CONVERGE_MS, intervalMs: 200 },
        ).catch(() => undefined);
        expect.soft(board.one, `round ${round + 1} (delay ${wait} ms): ${describeBoard(board)}`).toBe(true);

        // The old owner's exclusive claim holds against the newcomer; the newcomer's own claim is granted.
        const own = await toolOutput(newcomer.client, 'majordomus_claim', { paths: [`src/newcomer-${round + 1}/**`], intent: 'its own part', exclusive: true });
        await waitForJournal(root, CLAIMS_JOURNAL, (line) => (line.claim as { id?: string } | undefined)?.id === own.claim.id, own.claim.id);
        const overlapping = await outcome(newcomer.client, 'claim', { paths: ['src/owned/parser.ts'], intent: 'fix the parser', exclusive: true });
        expect.soft(
          overlapping.code ?? `granted ${JSON.stringify(overlapping.structured?.claim)}`,
          `round ${round + 1}: newcomer-${round + 1} claims inside old-owner's exclusive src/owned/**`,
        ).toBe('conflict');

        // No peer id names two clients, in the journal or in what any client sees.
        const namesById = new Map<string, Set<string>>();
        const note = (id: string, name: string): void => {
          namesById.set(id, (namesById.get(id) ?? new Set()).add(name));
        };
        for (const line of await journalLines(root, CLAIMS_JOURNAL)) {
          const claim = line.claim as { peer?: string; client?: { name?: string } } | undefined;
          if (line.event === 'claim' && claim?.peer && claim.client?.name) note(claim.peer, claim.client.name);
        }
        for (const view of Object.values(board.views)) for (const peer of view.peers) note(peer.id, peer.client.name);
        const reused = [...namesById].filter(([, names]) => names.size > 1).map(([id, names]) => `${id} names ${[...names].join(' and ')}`);
        expect.soft(reused, `round ${round + 1}: peer ids naming two clients`).toEqual([]);

        // A split checkout makes every later round meaningless: stop at the first.
        if (!board.one || reused.length > 0 || overlapping.code !== 'conflict') {
          const lease = await readLeaseDoc(root);
          throw new Error(`round ${round + 1} left the checkout split (the lease now names pid ${lease?.pid} at ${lease?.url}; old-owner is pid ${owner.pid})`);
        }
      }
    },
    60_000,
  );
});
