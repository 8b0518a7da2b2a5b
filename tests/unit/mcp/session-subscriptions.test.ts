/**
 * What a session tells its client when a new generation of the layer serves: list_changed when any
 * object appeared, vanished or changed; resources/updated for each changed URI it subscribed to;
 * nothing when nothing changed. Subscribing to a URI the layer does not serve is -32002.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { LayerObject } from '../../../src/layer/types.js';
import { RPC } from '../../../src/platform/jsonrpc.js';
import { McpSession, type McpBackend } from '../../../src/mcp/session.js';

function rule(identity: string): LayerObject {
  return {
    uri: `majordomus://rule/${identity}`,
    id: `rule.${identity}`,
    kind: 'rule',
    identity,
    title: identity,
    description: '',
    metadata: {},
    provenance: { path: `.ai/repo/rules/${identity}.md`, size: 4 },
    media_type: 'text/markdown',
    content: `# ${identity}\n`,
    tags: [],
  };
}

function backend(objects: LayerObject[]): McpBackend {
  return {
    tools: { tools: [], capabilityOf: () => undefined, resources: [] },
    invoke: async () => ({ ok: true, json: '{}' }),
    objects: () => objects,
    object: (uri) => objects.find((o) => o.uri === uri),
    join: async () => ({ peerId: 'p1', instructions: '' }),
    leave: () => undefined,
    instructions: async () => '',
  };
}

async function openSession(): Promise<{ session: McpSession; frames: unknown[] }> {
  const session = new McpSession(backend([rule('a'), rule('b')]));
  const frames: unknown[] = [];
  session.attachStream((frame) => frames.push(frame));
  const init = await session.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {} } });
  expect(init?.result).toMatchObject({ capabilities: { resources: { subscribe: true, listChanged: true } } });
  return { session, frames };
}

const subscribe = (uri: string, method = 'resources/subscribe') => ({ jsonrpc: '2.0', id: 2, method, params: { uri } });

describe('McpSession and a new layer generation', () => {
  it('sends list_changed once, and resources/updated only for the subscribed URIs that changed', async () => {
    const { session, frames } = await openSession();
    expect(await session.handle(subscribe('majordomus://rule/a'))).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    session.layerChanged(['majordomus://rule/a', 'majordomus://rule/c']);
    expect(frames).toEqual([
      { jsonrpc: '2.0', method: 'notifications/resources/list_changed' },
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'majordomus://rule/a' } },
    ]);
  });

  it('says nothing when nothing changed', async () => {
    const { session, frames } = await openSession();
    await session.handle(subscribe('majordomus://rule/a'));
    session.layerChanged([]);
    expect(frames).toEqual([]);
  });

  it('stops sending updates for a URI once unsubscribed (list_changed still goes)', async () => {
    const { session, frames } = await openSession();
    await session.handle(subscribe('majordomus://rule/b'));
    expect(await session.handle(subscribe('majordomus://rule/b', 'resources/unsubscribe'))).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    session.layerChanged(['majordomus://rule/b']);
    expect(frames).toEqual([{ jsonrpc: '2.0', method: 'notifications/resources/list_changed' }]);
  });

  it('refuses to subscribe to a URI the layer does not serve with -32002 naming it, and a missing uri with -32602', async () => {
    const { session } = await openSession();
    expect(await session.handle(subscribe('majordomus://rule/nope'))).toMatchObject({
      error: { code: RPC.resourceNotFound, message: expect.stringContaining('majordomus://rule/nope') },
    });
    expect(await session.handle({ jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: {} })).toMatchObject({ error: { code: RPC.invalidParams } });
    expect(await session.handle({ jsonrpc: '2.0', id: 4, method: 'resources/unsubscribe', params: { uri: 7 } })).toMatchObject({ error: { code: RPC.invalidParams } });
  });

  it('sends nothing after the session closed', async () => {
    const { session, frames } = await openSession();
    session.close();
    session.layerChanged(['majordomus://rule/a']);
    expect(frames).toEqual([]);
  });
});
