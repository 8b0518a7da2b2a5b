/**
 * Capabilities read as MCP resources: fixed URIs head resources/list, templates are listed by
 * resources/templates/list, and resources/read runs the capability with the URI's segments.
 */
import { describe, expect, it } from 'vitest';
import { resourceRoute, type ToolTable } from '../../../src/mcp/projection.js';
import { McpSession, type McpBackend } from '../../../src/mcp/session.js';
import type { CallOutcome } from '../../../src/platform/call.js';

const entry = (id: string) => ({ id, title: id, description: `${id} described` });

function backend(invoke: (capabilityId: string, args: unknown) => CallOutcome): McpBackend & { calls: unknown[] } {
  const tools: ToolTable = {
    tools: [],
    capabilityOf: () => undefined,
    resources: [resourceRoute('majordomus://things', entry('things.list')), resourceRoute('majordomus://things/{thing}/{part}', entry('things.part'))],
  };
  const calls: unknown[] = [];
  return {
    calls,
    tools,
    invoke: async (capabilityId, args) => {
      calls.push({ capabilityId, args });
      return invoke(capabilityId, args);
    },
    objects: () => [],
    object: () => undefined,
    join: async () => ({ peerId: 'p1', instructions: '' }),
    leave: () => undefined,
    instructions: async () => '',
  };
}

const read = (uri: string) => ({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } });

describe('resource routes', () => {
  it('matches a template segment by segment, decoding each, and nothing else', () => {
    const route = resourceRoute('majordomus://things/{thing}/{part}', entry('things.part'));
    expect(route.templated).toBe(true);
    expect(route.match('majordomus://things/a%20b/status')).toEqual({ thing: 'a b', part: 'status' });
    expect(route.match('majordomus://things/a/b/c')).toBeNull();
    expect(route.match('majordomus://things/%E0%A4%A/x')).toBeNull();
    expect(resourceRoute('majordomus://things', entry('things.list')).match('majordomus://things')).toEqual({});
  });

  it('lists fixed URIs with resources/list and templates with resources/templates/list', async () => {
    const session = new McpSession(backend(() => ({ ok: true, json: '{}' })));
    const listed = await session.handle({ jsonrpc: '2.0', id: 1, method: 'resources/list' });
    expect(listed?.result).toEqual({ resources: [{ uri: 'majordomus://things', name: 'things.list', title: 'things.list', description: 'things.list described', mimeType: 'application/json' }] });
    const templates = await session.handle({ jsonrpc: '2.0', id: 2, method: 'resources/templates/list' });
    expect(templates?.result).toEqual({
      resourceTemplates: [{ uriTemplate: 'majordomus://things/{thing}/{part}', name: 'things.part', title: 'things.part', description: 'things.part described' }],
    });
  });

  it('reads {text, mimeType} answers as they are and any other JSON as application/json', async () => {
    const fake = backend((capabilityId) =>
      capabilityId === 'things.part' ? { ok: true, json: JSON.stringify({ text: 'line\n', mimeType: 'text/plain' }) } : { ok: true, json: '{"things":[]}' },
    );
    const session = new McpSession(fake);
    expect((await session.handle(read('majordomus://things/t1/result')))?.result).toEqual({ contents: [{ uri: 'majordomus://things/t1/result', mimeType: 'text/plain', text: 'line\n' }] });
    expect(fake.calls).toEqual([{ capabilityId: 'things.part', args: { thing: 't1', part: 'result' } }]);
    expect((await session.handle(read('majordomus://things')))?.result).toEqual({ contents: [{ uri: 'majordomus://things', mimeType: 'application/json', text: '{"things":[]}' }] });
  });

  it('answers a refusal with -32002 naming the URI and an internal failure with -32603', async () => {
    const refused = new McpSession(backend(() => ({ ok: false, code: 'refused', message: 'no session t9; call session_list' })));
    expect(await refused.handle(read('majordomus://things/t9/status'))).toMatchObject({ error: { code: -32002, message: 'majordomus://things/t9/status: no session t9; call session_list' } });
    const failed = new McpSession(backend(() => ({ ok: false, code: 'internal', message: 'boom' })));
    expect(await failed.handle(read('majordomus://things/t9/status'))).toMatchObject({ error: { code: -32603 } });
    expect(await failed.handle(read('majordomus://nothing/here'))).toMatchObject({ error: { code: -32002, message: 'Resource not found: majordomus://nothing/here' } });
  });
});
