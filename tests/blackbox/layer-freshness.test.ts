/**
 * The layer stays fresh (docs/LAYER.md, "Freshness"): an edit under `.ai/` is rebuilt off the main
 * thread and swapped into every thread as one generation; every MCP client hears of it; a broken
 * edit keeps the last good object served; a write under the local half rebuilds nothing; with vcs
 * discovery a new file is served once `git add`ed; search answers from each generation's text. Clients are the MCP SDK's own, over stdio (the
 * owner's and a bridged one), plus REST and a plain `POST /mcp` session.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collectNotices, joinPeer, noticesOf, rest, restOk, waitForNotice } from '../helpers/coordination.js';
import { git } from '../helpers/fixture-repo.js';
import {
  httpMcpSession,
  httpResourceText,
  infoVia,
  LIST_CHANGED,
  matches,
  NOTHING_CHANGED,
  RELOADED,
  resourceText,
  restContent,
  startWatchingOwner,
  UPDATED,
  WATCHING,
} from '../helpers/freshness.js';
import { readLeaseDoc, rootOf, RULE_URI, Scene, SHARED_LAYER, waitForLog } from '../helpers/shared.js';
import { waitFor } from '../helpers/wait.js';

const RULE_FILE = '.ai/repo/rules/code/small-modules.md';
const OTHER_URI = 'majordomus://rule/testing';
const EDITED = '---\ntitle: Prefer small modules\ntags: [style]\n---\n# Prefer small modules\n\nEdited while two clients were attached.\n';
const BROKEN = '---\ntitle: [unclosed\n---\n# Broken\n';
const FIXED = '---\ntitle: Prefer small modules\n---\n# Prefer small modules\n\nFixed again.\n';

/** The URIs `GET /api/v1/search` finds for `query`: the generation's search index, over REST. */
async function searchUris(root: string, query: string): Promise<string[]> {
  const found = restOk<{ hits: Array<{ uri: string }> }>(await rest(root, 'GET', `/api/v1/search?query=${encodeURIComponent(query)}`));
  return found.hits.map((hit) => hit.uri);
}

describe('the layer stays fresh', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('an edited rule reaches every client: list_changed to the owner and a bridge, the new text over stdio, the bridge, REST and POST /mcp, resources/updated to a subscriber', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await startWatchingOwner(scene, repo.root);
    const bridged = await joinPeer(scene, repo.root, 'bridged');
    await waitForLog(bridged.stderr, /as a bridge/);
    const http = await httpMcpSession(repo.root, 'plain-http');
    const before = SHARED_LAYER[RULE_FILE] as string;
    expect(await resourceText(bridged.client, RULE_URI)).toBe(before);
    expect(await httpResourceText(http, RULE_URI)).toBe(before);
    expect(await searchUris(repo.root, 'attached')).not.toContain(RULE_URI);
    expect(await searchUris(repo.root, 'concept')).toContain(RULE_URI);
    expect((await infoVia(owner.client)).generation).toBe(1);
    await bridged.client.subscribeResource({ uri: RULE_URI });
    await owner.client.subscribeResource({ uri: OTHER_URI });

    await writeFile(join(repo.root, RULE_FILE), EDITED);

    await waitForNotice(owner, LIST_CHANGED);
    await waitForNotice(bridged, LIST_CHANGED);
    expect(await waitForNotice(bridged, UPDATED, (p: { uri: string }) => p.uri === RULE_URI)).toEqual({ uri: RULE_URI });
    expect(await resourceText(owner.client, RULE_URI)).toBe(EDITED);
    expect(await resourceText(bridged.client, RULE_URI)).toBe(EDITED);
    expect(await restContent(repo.root, RULE_URI)).toBe(EDITED);
    expect(await httpResourceText(http, RULE_URI)).toBe(EDITED);
    // The generation's search index (updated in place by the build worker) knows the new words only.
    expect(await searchUris(repo.root, 'attached')).toContain(RULE_URI);
    expect(await searchUris(repo.root, 'concept')).not.toContain(RULE_URI);
    // The tool answered from the pool's cache before the edit answers the new text too.
    expect(restOk<{ content: string }>(await rest(repo.root, 'GET', `/api/v1/object?uri=${encodeURIComponent(RULE_URI)}`)).content).toBe(EDITED);
    // The owner subscribed to a rule that did not change: no update for it.
    expect(noticesOf(owner, UPDATED)).toEqual([]);
    expect((await infoVia(owner.client)).generation).toBe(2);
    expect((await infoVia(bridged.client)).generation).toBe(2);
    const lease = await readLeaseDoc(repo.root);
    expect(await rootOf(lease?.url as string)).toMatchObject({ generation: 2 });
    await waitForLog(owner.stderr, /majordomus info: layer generation 2: 4 objects, 0 diagnostics \(ok\), 1 changed, built in \d+ ms/);
    await http.close();
    await scene.rebaselineAll();
  });

  it('a broken edit keeps the last good text served with a diagnostic saying so; fixing it recovers', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await startWatchingOwner(scene, repo.root);
    const before = SHARED_LAYER[RULE_FILE] as string;

    await writeFile(join(repo.root, RULE_FILE), BROKEN);
    const broken = await waitFor(async () => {
      const info = await infoVia(owner.client);
      return info.generation === 2 ? info : null;
    }, { what: 'generation 2 (the broken edit)' });
    expect(broken.state).toBe('degraded');
    expect(broken.diagnostics).toEqual([
      { severity: 'error', code: 'malformed_yaml', path: RULE_FILE, message: expect.stringMatching(/last good version of this file is still served/) },
    ]);
    expect(broken.counts).toEqual({ rule: 2, document: 1, adr: 1 });
    expect(await resourceText(owner.client, RULE_URI)).toBe(before);
    expect(await restContent(repo.root, RULE_URI)).toBe(before);
    // The object set did not change: nobody is told the list changed.
    expect(noticesOf(owner, LIST_CHANGED)).toEqual([]);

    await writeFile(join(repo.root, RULE_FILE), FIXED);
    await waitForNotice(owner, LIST_CHANGED);
    const fixed = await infoVia(owner.client);
    // Generations reach the owner's session in order: had the broken one said the list changed,
    // its notice would have come before this one.
    expect(noticesOf(owner, LIST_CHANGED)).toHaveLength(1);
    expect(fixed).toMatchObject({ generation: 3, state: 'ok', diagnostics: [] });
    expect(await resourceText(owner.client, RULE_URI)).toBe(FIXED);
    expect(await restContent(repo.root, RULE_URI)).toBe(FIXED);
    // Two generations after the first, the search index holds the fixed text and not the first.
    expect(await searchUris(repo.root, 'fixed')).toEqual([RULE_URI]);
    expect(await searchUris(repo.root, 'concept')).not.toContain(RULE_URI);
    await scene.rebaselineAll();
  });

  it('a broken manifest keeps every object served with a reload_failed diagnostic, and --strict does not stop the server', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await startWatchingOwner(scene, repo.root, 'owner', ['--strict']);
    const manifest = join(repo.root, '.ai/manifest.yaml');

    await writeFile(manifest, 'schema: ai-repository/v1\ncolour: blue\n');
    const failed = await waitFor(async () => {
      const info = await infoVia(owner.client);
      return info.generation === 2 ? info : null;
    }, { what: 'generation 2 (the broken manifest)' });
    expect(failed).toMatchObject({ state: 'degraded', counts: { rule: 2, document: 1, adr: 1 } });
    expect(failed.diagnostics).toEqual([
      { severity: 'error', code: 'reload_failed', path: '.ai/manifest.yaml', message: expect.stringMatching(/^the layer could not be rebuilt \(MAJ_MANIFEST_INVALID: .*colour.*\); the objects of the last good build are still served$/s) },
    ]);
    expect(await resourceText(owner.client, RULE_URI)).toBe(SHARED_LAYER[RULE_FILE]);
    await waitForLog(owner.stderr, /majordomus warn: layer generation 2: 4 objects, 1 diagnostics \(degraded\), 0 changed, built in \d+ ms — the rebuild failed \(MAJ_MANIFEST_INVALID/);

    await writeFile(manifest, 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: .ai/local}\n');
    const recovered = await waitFor(async () => {
      const info = await infoVia(owner.client);
      return info.generation === 3 ? info : null;
    }, { what: 'generation 3 (the manifest fixed)' });
    expect(recovered).toMatchObject({ state: 'ok', diagnostics: [] });
    await scene.rebaselineAll();
  });

  it('writes under the local half rebuild nothing; a write elsewhere under .ai/ that changes no object swaps no generation', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await startWatchingOwner(scene, repo.root);
    await mkdir(join(repo.root, '.ai/local/scratch/deep'), { recursive: true });
    for (let i = 0; i < 5; i += 1) await writeFile(join(repo.root, `.ai/local/scratch/deep/note-${i}.md`), `# note ${i}\n`);
    await writeFile(join(repo.root, '.ai/local/scratch/rules.md'), '# not a rule\n');
    // Far longer than the 50 ms quiet window: a rebuild the local writes set off would be a build
    // of its own, and a second "nothing changed" line below.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // A file under .ai/ that is no layer file: watched, rebuilt, nothing changes.
    await writeFile(join(repo.root, '.ai/NOTES.txt'), 'scratch\n');
    await waitFor(() => matches(owner.stderr(), NOTHING_CHANGED) >= 1, { what: 'the rebuild of .ai/NOTES.txt' });
    expect(matches(owner.stderr(), NOTHING_CHANGED)).toBe(1);
    expect(matches(owner.stderr(), RELOADED)).toBe(0);
    expect((await infoVia(owner.client)).generation).toBe(1);
    expect(noticesOf(owner, LIST_CHANGED)).toEqual([]);
    await scene.rebaselineAll();
  });

  it('with vcs discovery a new file is served once git add stages it, not before', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await startWatchingOwner(scene, repo.root);
    const file = '.ai/repo/rules/fresh.md';
    await writeFile(join(repo.root, file), '# Fresh rule\n\nStaged later.\n');
    await waitFor(() => matches(owner.stderr(), NOTHING_CHANGED) >= 1, { what: 'the rebuild of the untracked file' });
    expect((await infoVia(owner.client)).generation).toBe(1);

    await git(repo.root, ['add', file]);
    await waitForNotice(owner, LIST_CHANGED);
    expect(await resourceText(owner.client, 'majordomus://rule/fresh')).toBe('# Fresh rule\n\nStaged later.\n');
    expect((await infoVia(owner.client)).counts).toMatchObject({ rule: 3 });
    await git(repo.root, ['rm', '-q', '--cached', file]);
    await scene.rebaselineAll();
  });

  it("a bridge that takes over keeps its client's subscriptions: the new server sends resources/updated", async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await startWatchingOwner(scene, repo.root);
    const bridged = await joinPeer(scene, repo.root, 'bridged', { env: { MAJORDOMUS_LOG: 'debug' } });
    await waitForLog(bridged.stderr, /as a bridge/);
    await bridged.client.subscribeResource({ uri: RULE_URI });
    process.kill(owner.pid, 'SIGKILL');
    // Its next request (one it may re-send) finds the server gone: it takes over and replays
    // initialize and the subscription.
    await bridged.client.listResources();
    expect((await infoVia(bridged.client)).generation).toBe(1);
    await waitForLog(bridged.stderr, /took over as the shared server/);
    await waitForLog(bridged.stderr, WATCHING);
    await writeFile(join(repo.root, RULE_FILE), EDITED);
    expect(await waitForNotice(bridged, UPDATED, (p: { uri: string }) => p.uri === RULE_URI)).toEqual({ uri: RULE_URI });
    expect(await resourceText(bridged.client, RULE_URI)).toBe(EDITED);
    await scene.rebaselineAll();
  });

  it('subscribing to a URI the layer does not serve is a JSON-RPC error naming it', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await joinPeer(scene, repo.root, 'owner');
    await expect(owner.client.subscribeResource({ uri: 'majordomus://rule/nope' })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining("majordomus://rule/nope (the layer's objects, resources/list, and the sessions' resources"),
    });
    await owner.client.subscribeResource({ uri: RULE_URI });
    await owner.client.unsubscribeResource({ uri: RULE_URI });
  });
});

describe('the layer stays fresh for a client served alone', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('mcp --standalone serves an edit and tells its client', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const client = await scene.client(repo.root, { standalone: true, env: { MAJORDOMUS_LOG: 'debug' } });
    const notices = collectNotices(client.client);
    await waitForLog(client.stderr, WATCHING);
    await client.client.subscribeResource({ uri: RULE_URI });
    await writeFile(join(repo.root, RULE_FILE), EDITED);
    await waitFor(() => notices.some((n) => n.method === UPDATED && n.params.uri === RULE_URI), { what: 'resources/updated' });
    expect(notices.map((n) => n.method)).toEqual([LIST_CHANGED, UPDATED]);
    expect(await resourceText(client.client, RULE_URI)).toBe(EDITED);
    expect((await infoVia(client.client)).generation).toBe(2);
    await scene.rebaselineAll();
  });
});
