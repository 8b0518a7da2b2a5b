/**
 * McpSession over a fake backend: the JSON-RPC and MCP rules, independent of any transport.
 * Covers:
 * - malformed JSON → -32700 with a null id, and the session keeps answering;
 * - not a JSON-RPC 2.0 request → -32600; an unknown method → -32601;
 * - tools/call: an unknown tool → -32602; arguments the backend refuses as invalid_input → -32602;
 *   any other CapabilityError → an isError result with a readable text; success → text and
 *   structuredContent;
 * - notifications (with any method) and stray responses get no answer;
 * - initialize echoes a supported protocol version and falls back to the latest for an unknown
 *   one, joins the board once and returns the instructions for that peer;
 * - resources/list pages with an opaque cursor to the end; a bad cursor → -32602;
 * - resources/read of an unknown URI → -32002;
 * - close() makes the peer leave, once.
 */
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { frameText } from '../../../src/mcp/frame.js';
import { describe, expect, it } from 'vitest';
import { CapabilityError } from '../../../src/platform/errors.js';
import type { LayerObject } from '../../../src/layer/types.js';
import type { McpTool, ToolTable } from '../../../src/mcp/projection.js';
import { RPC } from '../../../src/platform/jsonrpc.js';
import { McpSession, type McpBackend } from '../../../src/mcp/session.js';
import type { PeerClient } from '../../../src/peers/board.js';

function object(n: number): LayerObject {
  const identity = `r${String(n).padStart(4, '0')}`;
  return {
    uri: `majordomus://rule/${identity}`,
    id: `rule.${identity}`,
    kind: 'rule',
    identity,
    title: `Rule ${n}`,
    description: '',
    metadata: {},
    provenance: { path: `.ai/repo/rules/${identity}.md`, size: 10 },
    media_type: 'text/markdown',
    content: `# Rule ${n}\n`,
    tags: [],
  };
}

function tool(name: string): McpTool {
  return {
    name,
    title: name,
    description: name,
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
    annotations: { title: name, readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  };
}

interface FakeBackend extends McpBackend {
  joined: PeerClient[];
  left: string[];
  calls: Array<{ capabilityId: string; args: unknown; caller: string | null }>;
}

/** Tools: `echo` answers its arguments, `strict` refuses any argument, `missing` is a not_found. */
function fakeBackend(objectCount = 3): FakeBackend {
  const objects = Array.from({ length: objectCount }, (_, i) => object(i + 1));
  const ids: Record<string, string> = { echo: 'test.echo', strict: 'test.strict', missing: 'test.missing' };
  const tools: ToolTable = { tools: Object.keys(ids).map(tool), capabilityOf: (name) => ids[name], resources: [] };
  const backend: FakeBackend = {
    joined: [],
    left: [],
    calls: [],
    tools,
    async invoke(capabilityId, args, caller) {
      backend.calls.push({ capabilityId, args, caller });
      if (capabilityId === 'test.strict') return { ok: false, code: 'invalid_input', message: 'test.strict: (input): no arguments allowed' };
      if (capabilityId === 'test.missing') return { ok: false, code: 'not_found', message: 'no object majordomus://rule/nope' };
      return { ok: true, json: JSON.stringify({ echoed: args }) };
    },
    objects: () => objects,
    object: (uri) => objects.find((o) => o.uri === uri),
    async join(client) {
      backend.joined.push(client);
      const peerId = `p${backend.joined.length}`;
      return { peerId, instructions: await backend.instructions(peerId) };
    },
    leave(peerId) {
      backend.left.push(peerId);
    },
    async instructions(peerId) {
      return `You are peer ${peerId}.`;
    },
  };
  return backend;
}

const initialize = (protocolVersion: string, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'tester', version: '2.0' } },
});

const request = (method: string, params?: Record<string, unknown>, id: number | string = 7) => ({ jsonrpc: '2.0', id, method, params });

describe('McpSession', () => {
  it('answers malformed JSON with -32700 and a null id, then keeps answering', async () => {
    const session = new McpSession(fakeBackend());
    const answer = await session.handleText('{"jsonrpc":"2.0","id":1,');
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(await session.handleText(JSON.stringify(request('ping', undefined, 2)))).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });

  it('answers a message that is not a JSON-RPC 2.0 request with -32600', async () => {
    const session = new McpSession(fakeBackend());
    expect(await session.handle({ jsonrpc: '1.0', id: 3, method: 'ping' })).toMatchObject({ id: 3, error: { code: -32600 } });
    expect(await session.handle([request('ping')])).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await session.handle('ping')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await session.handle({ jsonrpc: '2.0', id: 4, method: 42 })).toMatchObject({ id: 4, error: { code: -32600 } });
    expect(await session.handle({ jsonrpc: '2.0', id: { nested: true }, method: 'ping' })).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('answers an unknown method with -32601 naming it', async () => {
    const session = new McpSession(fakeBackend());
    const answer = await session.handle(request('prompts/frobnicate'));
    expect(answer).toMatchObject({ id: 7, error: { code: -32601 } });
    expect(answer?.error?.message).toContain('prompts/frobnicate');
  });

  it('answers a call of an unknown tool with -32602 naming the tool', async () => {
    const backend = fakeBackend();
    const session = new McpSession(backend);
    const answer = await session.handle(request('tools/call', { name: 'nope', arguments: {} }));
    expect(answer).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(answer?.error?.message).toContain('nope');
    expect(backend.calls).toEqual([]);
  });

  it('answers arguments the capability refuses as invalid with -32602', async () => {
    const session = new McpSession(fakeBackend());
    const answer = await session.handle(request('tools/call', { name: 'strict', arguments: { x: 1 } }));
    expect(answer).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(answer?.error?.message).toContain('no arguments allowed');
  });

  it('turns any other capability refusal into an isError result with a readable text', async () => {
    const session = new McpSession(fakeBackend());
    const answer = await session.handle(request('tools/call', { name: 'missing', arguments: {} }));
    expect(answer?.error).toBeUndefined();
    expect(answer?.result).toEqual({ content: [{ type: 'text', text: 'not_found: no object majordomus://rule/nope' }], isError: true });
  });

  it('answers a tool call with text and structured content, passing the caller peer id', async () => {
    const backend = fakeBackend();
    const session = new McpSession(backend);
    await session.handle(initialize(LATEST_PROTOCOL_VERSION));
    const answer = await session.handle(request('tools/call', { name: 'echo', arguments: { a: 1 } }));
    // The output crosses as JSON text and is written as it is: compare the frame a transport writes.
    expect(JSON.parse(frameText(answer)).result).toEqual({ content: [{ type: 'text', text: '{"echoed":{"a":1}}' }], structuredContent: { echoed: { a: 1 } } });
    expect(backend.calls).toEqual([{ capabilityId: 'test.echo', args: { a: 1 }, caller: 'p1' }]);
  });

  it('gives notifications and stray responses no answer', async () => {
    const session = new McpSession(fakeBackend());
    expect(await session.handle({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeUndefined();
    expect(await session.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })).toBeUndefined();
    expect(await session.handle({ jsonrpc: '2.0', method: 'no/such/notification' })).toBeUndefined();
    expect(await session.handle({ jsonrpc: '2.0', id: 5, result: {} })).toBeUndefined();
  });

  it('echoes a supported protocol version', async () => {
    const older = SUPPORTED_PROTOCOL_VERSIONS.find((v) => v !== LATEST_PROTOCOL_VERSION);
    expect(older).toBeDefined();
    const session = new McpSession(fakeBackend());
    const answer = await session.handle(initialize(older!));
    expect(answer?.result).toMatchObject({ protocolVersion: older, serverInfo: { name: 'majordomus' } });
    expect(session.protocolVersion).toBe(older);
  });

  it('falls back to the latest protocol version for an unknown one', async () => {
    const session = new McpSession(fakeBackend());
    const answer = await session.handle(initialize('1999-01-01'));
    expect(answer?.result).toMatchObject({ protocolVersion: LATEST_PROTOCOL_VERSION });
  });

  it('joins the board once, with the client info, and answers with the instructions for that peer', async () => {
    const backend = fakeBackend();
    const session = new McpSession(backend);
    const first = await session.handle(initialize(LATEST_PROTOCOL_VERSION, 1));
    await session.handle(initialize(LATEST_PROTOCOL_VERSION, 2));
    expect(backend.joined).toEqual([{ name: 'tester', version: '2.0' }]);
    expect(session.peerId).toBe('p1');
    expect(first?.result).toMatchObject({
      instructions: 'You are peer p1.',
      capabilities: { tools: {}, resources: {} },
    });
  });

  it('refuses an initialize without a protocol version with -32602', async () => {
    const session = new McpSession(fakeBackend());
    expect(await session.handle(request('initialize', { capabilities: {} }))).toMatchObject({ error: { code: -32602 } });
  });

  it('pages resources/list with an opaque cursor until the last page', async () => {
    const session = new McpSession(fakeBackend(1203));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const answer = await session.handle(request('resources/list', cursor === undefined ? {} : { cursor }));
      const result = answer?.result as { resources: Array<{ uri: string; name: string; mimeType: string }>; nextCursor?: string };
      expect(result.resources.length).toBeGreaterThan(0);
      seen.push(...result.resources.map((r) => r.uri));
      cursor = result.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(1203);
    expect(new Set(seen).size).toBe(1203);
    expect(seen[0]).toBe('majordomus://rule/r0001');
    expect(seen.at(-1)).toBe('majordomus://rule/r1203');
  });

  it('lists every resource on one page when they fit, without a cursor', async () => {
    const session = new McpSession(fakeBackend(3));
    const answer = await session.handle(request('resources/list'));
    expect(answer?.result).toEqual({
      resources: [1, 2, 3].map((n) => ({
        uri: `majordomus://rule/r000${n}`,
        name: `rule.r000${n}`,
        title: `Rule ${n}`,
        description: '',
        mimeType: 'text/markdown',
        size: 10,
      })),
    });
  });

  it('refuses a bad cursor with -32602', async () => {
    const session = new McpSession(fakeBackend(3));
    for (const cursor of ['not-a-cursor', Buffer.from('-5').toString('base64url'), Buffer.from('99999').toString('base64url'), 17]) {
      expect(await session.handle(request('resources/list', { cursor })), String(cursor)).toMatchObject({ error: { code: -32602 } });
    }
  });

  it('reads a resource by URI and refuses an unknown one with -32002', async () => {
    const session = new McpSession(fakeBackend(2));
    expect((await session.handle(request('resources/read', { uri: 'majordomus://rule/r0002' })))?.result).toEqual({
      contents: [{ uri: 'majordomus://rule/r0002', mimeType: 'text/markdown', text: '# Rule 2\n' }],
    });
    const missing = await session.handle(request('resources/read', { uri: 'majordomus://rule/nope' }));
    expect(missing).toMatchObject({ error: { code: RPC.resourceNotFound } });
    expect(RPC.resourceNotFound).toBe(-32002);
  });

  it('lets its peer leave the board on close, once', async () => {
    const backend = fakeBackend();
    const session = new McpSession(backend);
    await session.handle(initialize(LATEST_PROTOCOL_VERSION));
    session.close();
    session.close();
    expect(backend.left).toEqual(['p1']);
  });
});
