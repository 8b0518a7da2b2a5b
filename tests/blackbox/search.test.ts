/**
 * Full-text search through the built executable, on a layer with accented text:
 * - REST (`serve`: the HTTP thread and its pool answer from the index the snapshot carries):
 *   `zlutoucky kun` finds "Žluťoučký kůň" first, a typo and a prefix still find their object,
 *   the kind filter and the limit apply, and asking twice gives the same answer;
 * - MCP over stdio (`mcp --standalone`: the main thread builds its own index) answers the same
 *   hits as REST for the same query.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createFixtureRepo, type FixtureRepo } from '../helpers/fixture-repo.js';
import { connectMcp, type McpConnection } from '../helpers/mcp-client.js';
import { startServe, type ServeProcess } from '../helpers/serve.js';

const FILES: Readonly<Record<string, string>> = {
  '.ai/repo/knowledge/czech.md': '---\ntitle: Žluťoučký kůň\ndescription: Pangram.\n---\n# Žluťoučký kůň\n\nPříliš žluťoučký kůň úpěl ďábelské ódy.\n',
  '.ai/repo/knowledge/horses.md': '# Horses\n\nA yellow horse is not a kun.\n',
  '.ai/repo/rules/snapshots.md': '---\ntitle: Snapshots are frozen\ntags: [threads]\n---\n# Snapshots are frozen\n\nEvery thread decodes the snapshot once.\n',
  '.ai/repo/rules/leases.md': '# Leases\n\nThe lease file names the shared server.\n',
};

const CZECH = 'majordomus://document/czech';
const HORSES = 'majordomus://document/horses';
const SNAPSHOTS = 'majordomus://rule/snapshots';

interface Hit {
  uri: string;
  kind: string;
  title: string;
  score: number;
}

describe('search through the executable', () => {
  let repo: FixtureRepo | undefined;
  let server: ServeProcess | undefined;
  let mcp: McpConnection | undefined;
  afterEach(async () => {
    await mcp?.close();
    await server?.stop();
    await repo?.cleanup();
    [repo, server, mcp] = [undefined, undefined, undefined];
  });

  it('finds "Žluťoučký kůň" for `zlutoucky kun` over REST and MCP alike, with typos, prefixes, kind and limit', async () => {
    repo = await createFixtureRepo({ files: FILES });
    server = await startServe({ cwd: repo.root, env: { MAJORDOMUS_ANSWER_CACHE: '0' } });
    const search = async (params: Record<string, string>): Promise<Hit[]> => {
      const res = await fetch(`${server?.loopbackUrl}/api/v1/search?${new URLSearchParams(params).toString()}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { hits: Hit[] }).hits;
    };

    const czech = await search({ query: 'zlutoucky kun' });
    expect(czech.map((hit) => hit.uri)).toEqual([CZECH, HORSES]); // "kun" alone is in horses.md
    expect(czech[0]).toMatchObject({ uri: CZECH, kind: 'document', title: 'Žluťoučký kůň' });
    expect(czech[0]?.score).toBeGreaterThan(czech[1]?.score ?? Infinity);
    expect(await search({ query: 'zlutoucky kun' })).toEqual(czech);
    expect((await search({ query: 'ZLUŤOUČKÝ' })).map((hit) => hit.uri)).toEqual([CZECH]);
    expect((await search({ query: 'snpshts' })).map((hit) => hit.uri)).toEqual([]);
    expect((await search({ query: 'snapshos' })).map((hit) => hit.uri)).toEqual([SNAPSHOTS]);
    expect((await search({ query: 'froz' })).map((hit) => hit.uri)).toEqual([SNAPSHOTS]);
    expect((await search({ query: 'zlutoucky kun', kind: 'rule' })).map((hit) => hit.uri)).toEqual([]);
    expect((await search({ query: 'zlutoucky kun', limit: '1' })).map((hit) => hit.uri)).toEqual([CZECH]);

    mcp = await connectMcp({ cwd: repo.root, standalone: true });
    const result = await mcp.client.callTool({ name: 'majordomus_search', arguments: { query: 'zlutoucky kun' } });
    expect((result.structuredContent as { hits: Hit[] }).hits).toEqual(czech);
  });
});
