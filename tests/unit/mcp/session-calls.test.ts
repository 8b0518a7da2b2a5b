/**
 * McpSession's long calls, over a fake backend whose tool reports progress when told and stops
 * when its signal aborts. Covers:
 * - a tool call carrying `_meta.progressToken` (string or number), handled with a sink, reports
 *   each progress line as `notifications/progress` in order with progress 1, 2, 3…, before its
 *   answer, and nothing once answered;
 * - without a token, or without a sink, the call gets no progress sink, but still its signal;
 * - `notifications/cancelled` aborts the named call (its signal carries the reason), which gets no
 *   answer — even when its handler ignores the signal; other calls, an unknown id and an id of
 *   another type (7 vs "7") are left alone;
 * - `close()` aborts every call in flight, which get no answer;
 * - `notify()` reaches the attached stream only: a later attach replaces it, a detach of the
 *   replaced one changes nothing, and after detach or close nothing is sent;
 * - the stdio forms: `handleLine` writes progress frames as text, `streamTo` writes the session's
 *   own notifications as text.
 */
import { describe, expect, it } from 'vitest';
import type { McpTool } from '../../../src/mcp/projection.js';
import type { JsonRpcNotification } from '../../../src/platform/jsonrpc.js';
import { McpSession, type McpBackend } from '../../../src/mcp/session.js';
import type { CallContext, CallOutcome } from '../../../src/platform/call.js';
import { waitFor, withTimeout } from '../../helpers/wait.js';

interface Call {
  id: string;
  call: CallContext | undefined;
  /** Reports one line of progress, as a handler would. */
  report(message: string): void;
  /** Ends the call with this output. */
  finish(output: unknown): void;
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

/**
 * Tool `follow` runs until finished, or until its signal aborts (then it answers `stopped`);
 * tool `stubborn` ignores its signal and never ends on its own.
 */
function followBackend(): McpBackend & { calls: Call[] } {
  const calls: Call[] = [];
  const ids: Record<string, string> = { follow: 'test.follow', stubborn: 'test.stubborn' };
  return {
    calls,
    tools: { tools: Object.keys(ids).map(tool), capabilityOf: (name) => ids[name], resources: [] },
    invoke(capabilityId, args, _caller, call) {
      return new Promise<CallOutcome>((resolve) => {
        const id = String((args as { id?: unknown }).id ?? calls.length);
        if (capabilityId === 'test.follow') call?.signal?.addEventListener('abort', () => resolve({ ok: true, json: '{"stopped":true}' }));
        calls.push({ id, call, report: (message) => call?.onProgress?.(message), finish: (output) => resolve({ ok: true, json: JSON.stringify(output) }) });
      });
    },
    objects: () => [],
    object: () => undefined,
    join: async () => ({ peerId: 'p1', instructions: '' }),
    leave: () => undefined,
    instructions: async () => '',
  };
}

const callTool = (id: number | string, name: string, meta?: Record<string, unknown>, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});
const cancelled = (requestId: unknown, reason?: string) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, ...(reason ? { reason } : {}) },
});

async function started(backend: { calls: Call[] }, count: number): Promise<Call[]> {
  await waitFor(() => backend.calls.length >= count, { timeoutMs: 2_000, what: `${count} call(s) to reach the backend` });
  return backend.calls;
}

describe('McpSession calls', () => {
  it('lends each call the spawn depth its bridge reported, and none when it reported none', async () => {
    const backend = followBackend();
    const deep = new McpSession(backend, { spawnDepth: 2 });
    void deep.handle(callTool(1, 'follow'));
    const plain = new McpSession(backend);
    void plain.handle(callTool(2, 'follow'));
    const [first, second] = await started(backend, 2);
    expect(first?.call?.depth).toBe(2);
    expect(second?.call).not.toHaveProperty('depth');
    deep.close();
    plain.close();
  });

  it('reports the progress of a call that asked for it, in order and rising, before its answer, and nothing after', async () => {
    const backend = followBackend();
    const session = new McpSession(backend);
    const frames: JsonRpcNotification[] = [];
    const answered = session.handle(callTool(1, 'follow', { progressToken: 'follow-1' }), (frame) => frames.push(frame));
    const [call] = await started(backend, 1);
    call?.report('line one');
    call?.report('line two');
    call?.report('line three');
    expect(frames).toEqual(
      ['line one', 'line two', 'line three'].map((message, index) => ({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'follow-1', progress: index + 1, message },
      })),
    );
    call?.finish({ lines: 3 });
    expect(await answered).toEqual({ jsonrpc: '2.0', id: 1, result: expect.objectContaining({ json: '{"lines":3}' }) });
    call?.report('too late');
    expect(frames).toHaveLength(3);
  });

  it('takes a numeric progress token, and lends no progress sink without a token or without a sink, but always a signal', async () => {
    const backend = followBackend();
    const session = new McpSession(backend);
    const frames: JsonRpcNotification[] = [];
    void session.handle(callTool(1, 'follow', { progressToken: 42 }), (frame) => frames.push(frame));
    void session.handle(callTool(2, 'follow'), (frame) => frames.push(frame));
    void session.handle(callTool(3, 'follow', { progressToken: 'no-sink' }));
    void session.handle(callTool(4, 'follow', { progressToken: { not: 'a token' } }), (frame) => frames.push(frame));
    const calls = await started(backend, 4);
    expect(calls.map((c) => typeof c.call?.onProgress)).toEqual(['function', 'undefined', 'undefined', 'undefined']);
    expect(calls.every((c) => c.call?.signal instanceof AbortSignal && !c.call.signal.aborted)).toBe(true);
    calls[0]?.report('numeric');
    expect(frames).toEqual([{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 42, progress: 1, message: 'numeric' } }]);
    session.close();
  });

  it('aborts the call a notifications/cancelled names, with its reason, and answers it with nothing', async () => {
    const backend = followBackend();
    const session = new McpSession(backend);
    const first = session.handle(callTool(7, 'follow', undefined, { id: 'a' }));
    const second = session.handle(callTool('other', 'follow', undefined, { id: 'b' }));
    const [a, b] = await started(backend, 2);
    // An unknown id and the same number written as a string name no call under way.
    expect(await session.handle(cancelled(99))).toBeUndefined();
    expect(await session.handle(cancelled('7'))).toBeUndefined();
    expect(a?.call?.signal?.aborted).toBe(false);
    expect(await session.handle(cancelled(7, 'the user pressed Escape'))).toBeUndefined();
    expect(a?.call?.signal?.aborted).toBe(true);
    expect((a?.call?.signal?.reason as Error).message).toBe('the user pressed Escape');
    expect(await withTimeout(first, 2_000, 'the cancelled call to settle')).toBeUndefined();
    expect(b?.call?.signal?.aborted).toBe(false);
    b?.finish({ done: true });
    expect(await second).toMatchObject({ id: 'other', result: expect.anything() });
  });

  it('answers a cancelled call with nothing at once, even when its handler ignores the signal', async () => {
    const backend = followBackend();
    const session = new McpSession(backend);
    const frames: JsonRpcNotification[] = [];
    const answered = session.handle(callTool(5, 'stubborn', { progressToken: 't' }), (frame) => frames.push(frame));
    const [call] = await started(backend, 1);
    await session.handle(cancelled(5));
    expect(await withTimeout(answered, 2_000, 'the cancelled call to settle')).toBeUndefined();
    call?.report('after the cancel'); // MCP: no progress for a request that is no longer active
    expect(frames).toEqual([]);
  });

  it('aborts every call in flight on close, and answers none of them', async () => {
    const backend = followBackend();
    const session = new McpSession(backend);
    const answers = [session.handle(callTool(1, 'follow')), session.handle(callTool(2, 'stubborn'))];
    const calls = await started(backend, 2);
    session.close();
    expect(calls.map((c) => c.call?.signal?.aborted)).toEqual([true, true]);
    expect(await withTimeout(Promise.all(answers), 2_000, 'the calls to settle')).toEqual([undefined, undefined]);
  });

  it('sends a notification tied to no request on the attached stream only', () => {
    const session = new McpSession(followBackend());
    expect(session.notify('notifications/message', { text: 'nobody listens' })).toBe(false);
    const first: JsonRpcNotification[] = [];
    const second: JsonRpcNotification[] = [];
    const detachFirst = session.attachStream((frame) => first.push(frame));
    expect(session.notify('notifications/message', { text: 'one' })).toBe(true);
    const detachSecond = session.attachStream((frame) => second.push(frame));
    detachFirst(); // the replaced stream's detach leaves the newer one attached
    expect(session.notify('notifications/tools/list_changed')).toBe(true);
    expect(first).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { text: 'one' } }]);
    expect(second).toEqual([{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);
    detachSecond();
    expect(session.notify('notifications/message', { text: 'gone' })).toBe(false);
    session.attachStream((frame) => second.push(frame));
    session.close();
    expect(session.notify('notifications/message', { text: 'closed' })).toBe(false);
    expect(second).toHaveLength(1);
  });

  it('writes progress and its own notifications as text frames on stdio', async () => {
    const backend = followBackend();
    const session = new McpSession(backend);
    const written: string[] = [];
    session.streamTo((frame) => written.push(frame));
    const answered = session.handleLine(JSON.stringify(callTool(3, 'follow', { progressToken: 'p' })), (frame) => written.push(frame));
    const [call] = await started(backend, 1);
    call?.report('a line');
    session.notify('notifications/message', { level: 'info' });
    call?.finish({ ok: 1 });
    written.push((await answered) as string);
    expect(written).toEqual([
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"a line"}}',
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}',
      '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\\"ok\\":1}"}],"structuredContent":{"ok":1}}}',
    ]);
  });
});
