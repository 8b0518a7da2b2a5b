/**
 * MCP logging on real processes (docs/MCP.md, "Logging"): one scenario over the owner's stdio, a
 * bridge and a direct `/mcp` client. Covers:
 * - initialize declares `logging: {}` on every path, and `logging/setLevel` answers {} on every
 *   path; an unknown level is -32602 on every path (the bridge relays the server's answer);
 * - a lease problem (the lease deleted under a live owner) reaches, as `notifications/message`
 *   at `warning`, the owner's stdio client, a bridged client and a direct `/mcp` client that set
 *   `warning`, and not a bridged client that set `error`;
 * - a client that never set a level hears warnings too (the default is `warning`);
 * - a broken edit of the layer reaches a client at `warning` as a warning naming the file and its
 *   diagnostic, and not a client at `error`;
 * - a bridged client whose server was killed keeps its level on the server it becomes (its
 *   client-replay carries the setLevel): at `info` it hears the takeover (a warning) and then a
 *   reload's info line;
 * - the server's stderr keeps the same lines.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { collectNotices, joinPeer, noticesOf, waitForNotice, type Notice, type Peer } from '../helpers/coordination.js';
import { startWatchingOwner } from '../helpers/freshness.js';
import { bearer, LEASE_RELATIVE, openHttpSession, readLeaseDoc, Scene, SHARED_LAYER, waitForLease, waitForLog } from '../helpers/shared.js';
import { isAlive, waitFor } from '../helpers/wait.js';

const MESSAGE = 'notifications/message';
const RULE_FILE = '.ai/repo/rules/code/small-modules.md';
const BROKEN = '---\ntitle: [unclosed\n---\n# Broken\n';
/** How long a client that should hear nothing is given after the others heard it (same thread, same moment). */
const SILENCE_MS = 1_500;

interface LogParams {
  level: string;
  logger?: string;
  data: unknown;
}

const logsOf = (notices: readonly Notice[]): LogParams[] => notices.filter((n) => n.method === MESSAGE).map((n) => n.params as LogParams);
const saying = (pattern: RegExp) => (params: LogParams) => typeof params.data === 'string' && pattern.test(params.data);

/** A direct `/mcp` client (the SDK's Streamable HTTP transport, which opens the session's GET stream). */
async function directClient(scene: Scene, root: string, name: string): Promise<{ client: Client; notices: Notice[] }> {
  const lease = await waitForLease(root, (doc) => doc.url !== null);
  const client = new Client({ name, version: '1.0.0' });
  const notices = collectNotices(client);
  const transport = new StreamableHTTPClientTransport(new URL(`${lease.url}/mcp`), { requestInit: { headers: bearer(lease.token) } });
  await client.connect(transport);
  scene.defer(async () => {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  });
  return { client, notices };
}

describe('MCP logging', () => {
  const scene = new Scene();
  afterEach(() => scene.cleanup());

  it('declares logging, answers setLevel with {} and refuses an unknown level with -32602 over stdio, a bridge and /mcp', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await joinPeer(scene, repo.root, 'owner');
    const bridged = await joinPeer(scene, repo.root, 'bridged');
    await waitForLog(bridged.stderr, /as a bridge/);
    const direct = await directClient(scene, repo.root, 'direct');
    for (const client of [owner.client, bridged.client, direct.client]) {
      expect(client.getServerCapabilities()).toMatchObject({ logging: {} });
      expect(await client.setLoggingLevel('notice')).toEqual({});
      await expect(client.request({ method: 'logging/setLevel', params: { level: 'verbose' } } as never, EmptyResultSchema)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('debug, info, notice, warning, error, critical, alert, emergency'),
      });
    }
    // A plain POST without the SDK: the same answer.
    const lease = await readLeaseDoc(repo.root);
    const { session } = await openHttpSession(lease?.url as string, 'plain', lease?.token as string);
    expect(await session.request('logging/setLevel', { level: 'error' })).toMatchObject({ result: {} });
    expect(await session.request('logging/setLevel', {})).toMatchObject({ error: { code: -32602 } });
    await session.close();
  });

  it('sends a lease problem to the owner, a bridge and a /mcp client at warning, and not to a bridge at error', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await joinPeer(scene, repo.root, 'owner');
    const atWarning = await joinPeer(scene, repo.root, 'bridged-warning');
    const atError = await joinPeer(scene, repo.root, 'bridged-error');
    const untouched = await joinPeer(scene, repo.root, 'bridged-default');
    const direct = await directClient(scene, repo.root, 'direct');
    await owner.client.setLoggingLevel('warning');
    await atWarning.client.setLoggingLevel('warning');
    await atError.client.setLoggingLevel('error');
    await direct.client.setLoggingLevel('warning');

    await rm(join(repo.root, LEASE_RELATIVE));

    const gone = /^the lease .*server\.json is gone; publishing it again$/;
    for (const peer of [owner, atWarning, untouched] as Peer[]) {
      expect(await waitForNotice(peer, MESSAGE, saying(gone))).toEqual({ level: 'warning', logger: 'majordomus', data: expect.stringMatching(gone) });
    }
    await waitFor(() => logsOf(direct.notices).find(saying(gone)), { what: 'the /mcp client to hear of the lease' });
    await new Promise((resolve) => setTimeout(resolve, SILENCE_MS));
    expect(logsOf(atError.notices)).toEqual([]);
    expect(owner.stderr()).toMatch(/majordomus warn: the lease .*server\.json is gone; publishing it again/);
    await waitForLease(repo.root, (doc) => doc.url !== null);
  });

  it('sends a broken edit of the layer to a client at warning as a warning naming the file, and not to one at error', async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await startWatchingOwner(scene, repo.root);
    const atError = await joinPeer(scene, repo.root, 'bridged-error');
    await atError.client.setLoggingLevel('error');
    await owner.client.setLoggingLevel('warning');

    await writeFile(join(repo.root, RULE_FILE), BROKEN);

    const broken = new RegExp(`^layer generation 2: ${RULE_FILE.replace(/\./g, '\\.')}: .*last good version of this file is still served.* \\(error malformed_yaml\\)$`, 's');
    expect(await waitForNotice(owner, MESSAGE, saying(broken))).toMatchObject({ level: 'warning', logger: 'majordomus' });
    await new Promise((resolve) => setTimeout(resolve, SILENCE_MS));
    expect(noticesOf(atError, MESSAGE)).toEqual([]);
    await scene.rebaselineAll();
  });

  it("keeps a bridged client's level on the server it becomes when its own was killed", async () => {
    const repo = await scene.repo({ files: SHARED_LAYER });
    const owner = await joinPeer(scene, repo.root, 'owner');
    const bridged = await joinPeer(scene, repo.root, 'bridged', { env: { MAJORDOMUS_LOG: 'debug' } });
    await bridged.client.setLoggingLevel('info');

    process.kill(owner.pid, 'SIGKILL');
    await waitFor(() => !isAlive(owner.pid), { what: 'the owner to die' });
    await bridged.client.ping(); // finds the server gone: the bridge takes over

    const tookOver = new RegExp(`^took over as the shared server of ${repo.root}$`);
    expect(await waitForNotice(bridged, MESSAGE, saying(tookOver))).toMatchObject({ level: 'warning' });
    await waitForLog(bridged.stderr, /layer: watching \d+ directories/);
    await writeFile(join(repo.root, RULE_FILE), '# Prefer small modules\n\nEdited after the takeover.\n');
    expect(await waitForNotice(bridged, MESSAGE, saying(/^layer generation 2: 4 objects, 0 diagnostics \(ok\), 1 changed/))).toMatchObject({ level: 'info' });
    await scene.rebaselineAll();
  });
});
