/**
 * Many clients starting at the same instant converge — black-box, built executable, a temporary
 * git repository, six `mcp` processes spawned together over real pipes. Covers:
 * - exactly one of them binds (`serving http` logged once), the lease names that one, and the
 *   other five attach as bridges to its URL (invariant 1: at most one server per root);
 * - they form one board: six distinct peer ids, and every client's `majordomus_peers` lists all
 *   six with their names (invariant 4);
 * - the election ends within its 20 s bound under that contention (invariant 6): a client whose
 *   election overran would serve alone and say so, so all six attaching or serving proves it
 *   (a wall clock here would also time six node spawns on a loaded machine);
 * - no tracked file changes (invariant 5).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SERVING_HTTP, SHARED_LAYER, Scene, countOf, idsOf, peersVia, waitForLease, waitForLog } from '../helpers/shared.js';

const CLIENTS = 6;

describe('convergence of clients started together', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('makes six clients started at the same instant converge on one server and one board', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const names = Array.from({ length: CLIENTS }, (_, i) => `agent-${i + 1}`);
    const clients = await Promise.all(names.map((name) => scene.client(repo.root, { name })));
    // Each has elected before answering initialize; wait for its log line to be read.
    for (const client of clients) await waitForLog(client.stderr, /serving http|attached to the shared server/);

    const all = clients.map((c) => c.stderr()).join('\n');
    expect(all).not.toContain('no server could be elected');
    expect(all).not.toContain('serving this client alone');
    expect(countOf(all, /serving http:\/\//), all).toBe(1);
    expect(countOf(all, /attached to the shared server/), all).toBe(CLIENTS - 1);
    const owners = clients.filter((c) => SERVING_HTTP.test(c.stderr()));
    expect(owners).toHaveLength(1);
    const lease = await waitForLease(repo.root);
    expect(lease.pid).toBe(owners[0]?.pid);
    for (const client of clients) {
      if (client !== owners[0]) expect(client.stderr()).toContain(`attached to the shared server ${lease.url} as a bridge`);
    }

    const answers = await Promise.all(clients.map((c) => peersVia(c.client)));
    const own = answers.map((a) => a.you);
    expect(new Set(own).size).toBe(CLIENTS);
    const everyone = idsOf(answers[0] as (typeof answers)[number]);
    expect(everyone).toHaveLength(CLIENTS);
    for (const [i, answer] of answers.entries()) {
      expect(idsOf(answer), `the board seen by ${names[i]}`).toEqual(everyone);
      expect(answer.peers.map((p) => p.client.name).sort()).toEqual([...names].sort());
      // Each is the peer it was named in initialize.
      expect(answer.peers.find((p) => p.id === answer.you)?.client.name).toBe(names[i]);
    }
  });
});
