/**
 * MCP on stdio, black-box: the built executable in a temporary git repository, driven by the
 * SDK's own Client over real pipes, for `mcp` and `mcp --standalone` alike. Covers:
 * - initialize: instructions name the caller's own peer id;
 * - tools/list: every builtin MCP tool, readOnlyHint true for queries and false for
 *   majordomus_announce, never destructive or open-world;
 * - resources/list and resources/read of a rule;
 * - tools/call of every builtin tool: majordomus_info, _list (kind filter), _get, _search,
 *   _capabilities (all ten capabilities, whose MCP exposures are exactly the tools of
 *   tools/list), _capability (each capability described as listed), _peers (own peer p1),
 *   _announce (then shown by _peers);
 * - refusals: an unknown tool and arguments failing the schema are JSON-RPC errors (-32602);
 *   _get of an unknown URI is an isError result with a readable text; resources/read of an
 *   unknown URI is a JSON-RPC error; the session answers after all of them;
 * - nothing is written: git status and every tracked file are unchanged, and `--standalone`
 *   creates no .ai/local (`mcp` may later keep its lease there, SPEC §6, never anything else);
 * And over raw pipes (lines written to stdin by hand):
 * - malformed JSON gets -32700 and the next valid request is still answered;
 * - stdout carries only JSON-RPC 2.0 frames, one per line;
 * - closing stdin ends the process with exit 0;
 * - a broken stdout pipe ends the process with exit 0 and no crash trace.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawnCli, type CliProcess } from '../helpers/cli.js';
import { createFixtureRepo, type FixtureRepo } from '../helpers/fixture-repo.js';
import { connectMcp, type McpConnection } from '../helpers/mcp-client.js';
import { statusOutside, treeState } from '../helpers/tree-state.js';
import { withTimeout } from '../helpers/wait.js';
import { BUILTIN_CAPABILITY_IDS, BUILTIN_COMMAND_IDS, BUILTIN_TOOLS, TOOL_EFFECTS } from '../helpers/builtins.js';

const RULE = `---
title: Prefer small modules
description: One concept per file.
tags: [style, layout]
---
# Prefer small modules

One concept per file, one public entry.
`;

const FILES = {
  '.ai/repo/rules/code/small-modules.md': RULE,
  '.ai/repo/skills/review/SKILL.md': '---\nname: review\ndescription: Review a change for correctness.\n---\n# Review\n\nRead the diff twice.\n',
  '.ai/repo/adrs/0001-use-mcp.md': '# Use MCP over stdio\n\nEvery agent speaks it.\n',
  '.ai/repo/knowledge/glossary.md': '# Glossary\n\nA peer is an attached MCP session.\n',
  'src/index.ts': 'export const answer = 42;\n',
};

const RULE_URI = 'majordomus://rule/code/small-modules';


const MODES = [
  // `--http-port 0` keeps the shared server (SPEC §6) off the fixed default port once it binds one.
  { mode: 'mcp', standalone: false, args: ['--http-port', '0'], mayWriteLocal: true },
  { mode: 'mcp --standalone', standalone: true, args: [], mayWriteLocal: false },
] as const;

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };

describe.each(MODES)('$mode over stdio with the SDK client', ({ standalone, args, mayWriteLocal }) => {
  // One server and one session serve every test of this block but the last: each test reads or
  // is refused, and a server started per test would prove nothing more (the session is the only
  // client, so it stays p1 throughout). The last test needs a checkout no server has touched yet.
  let repo: FixtureRepo | undefined;
  let connection: McpConnection | undefined;

  beforeAll(async () => {
    repo = await createFixtureRepo({ files: FILES });
    connection = await connectMcp({ cwd: repo.root, standalone, args });
  });

  afterAll(async () => {
    await connection?.close();
    connection = undefined;
    await repo?.cleanup();
    repo = undefined;
  });

  /** This block's session (started once, in beforeAll). */
  function session(): McpConnection {
    return connection!;
  }

  async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
    return (await connection!.client.callTool({ name, arguments: args })) as ToolResult;
  }

  async function rpcError(run: () => Promise<unknown>): Promise<McpError> {
    try {
      await run();
    } catch (error) {
      expect(error).toBeInstanceOf(McpError);
      return error as McpError;
    }
    throw new Error('expected a JSON-RPC error, got an answer');
  }

  it('names its own peer id p1 in the initialize instructions', async () => {
    const { client } = session();
    expect(client.getServerVersion()?.name).toBe('majordomus');
    expect(client.getInstructions()).toContain('You are peer p1.');
    expect(client.getInstructions()).toContain('majordomus_announce');
    for (const tool of ['majordomus_claim', 'majordomus_check_paths', 'majordomus_send_message']) expect(client.getInstructions()).toContain(tool);
  });

  it('lists every builtin tool, read-only for queries and not for the commands, with the effects each declares', async () => {
    const { client } = session();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(BUILTIN_TOOLS);
    const commands = [
      'majordomus_announce',
      'majordomus_spawn',
      'majordomus_session_send',
      'majordomus_session_kill',
      'run_task',
      'reply_task',
      'cancel_task',
      'majordomus_guard_install',
      'majordomus_guard_uninstall',
      'majordomus_claim',
      'majordomus_renew_claims',
      'majordomus_release_claims',
      'majordomus_release_stale_claims',
      'majordomus_send_message',
      'majordomus_ack_messages',
    ];
    for (const tool of tools) {
      const isCommand = commands.includes(tool.name);
      expect(tool.annotations, tool.name).toMatchObject({
        readOnlyHint: !isCommand,
        idempotentHint: !isCommand,
        destructiveHint: false,
        openWorldHint: false,
        ...TOOL_EFFECTS[tool.name],
      });
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.description, tool.name).toBeTruthy();
    }
  });

  it('lists every layer object as a resource, after the inbox and the sessions index', async () => {
    const { client } = session();
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'majordomus://inbox',
      'majordomus://sessions',
      'majordomus://adr/0001-use-mcp',
      'majordomus://document/glossary',
      RULE_URI,
      'majordomus://skill/review',
    ]);
    expect(resources.find((r) => r.uri === RULE_URI)).toMatchObject({ name: 'rule.code/small-modules', title: 'Prefer small modules', mimeType: 'text/markdown' });
  });

  it('reads a rule as a resource with its Markdown text', async () => {
    const { client } = session();
    const { contents } = await client.readResource({ uri: RULE_URI });
    expect(contents).toEqual([{ uri: RULE_URI, mimeType: 'text/markdown', text: RULE }]);
  });

  it('answers majordomus_info with the generation, the state, the counts by kind and no diagnostics', async () => {
    const result = await call('majordomus_info');
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      name: 'majordomus',
      generation: 1,
      discovery: 'vcs',
      state: 'ok',
      counts: { adr: 1, document: 1, rule: 1, skill: 1 },
      diagnostics: [],
    });
    expect(JSON.parse(result.content[0]?.text ?? '')).toEqual(result.structuredContent);
  });

  it('answers majordomus_list with only the objects of the kind asked for', async () => {
    const rules = await call('majordomus_list', { kind: 'rule' });
    expect(rules.structuredContent).toEqual({
      objects: [
        {
          uri: RULE_URI,
          id: 'rule.code/small-modules',
          kind: 'rule',
          identity: 'code/small-modules',
          title: 'Prefer small modules',
          description: 'One concept per file.',
          tags: ['layout', 'style'],
          path: '.ai/repo/rules/code/small-modules.md',
        },
      ],
    });
    const all = await call('majordomus_list');
    expect((all.structuredContent?.objects as unknown[]).length).toBe(4);
  });

  it('answers majordomus_get with the object and its content', async () => {
    const result = await call('majordomus_get', { uri: 'majordomus://skill/review' });
    expect(result.structuredContent).toMatchObject({
      uri: 'majordomus://skill/review',
      kind: 'skill',
      title: 'review',
      description: 'Review a change for correctness.',
      provenance: { path: '.ai/repo/skills/review/SKILL.md' },
      media_type: 'text/markdown',
    });
    expect(result.structuredContent?.content).toContain('Read the diff twice.');
  });

  it('answers majordomus_search with the matching object first', async () => {
    const result = await call('majordomus_search', { query: 'small modules' });
    const hits = result.structuredContent?.hits as Array<{ uri: string; score: number }>;
    expect(hits[0]?.uri).toBe(RULE_URI);
    const limited = await call('majordomus_search', { query: 'peer', kind: 'document', limit: 1 });
    expect((limited.structuredContent?.hits as Array<{ uri: string }>).map((h) => h.uri)).toEqual(['majordomus://document/glossary']);
  });

  it('answers majordomus_capabilities with every capability of the registry, each tool of tools/list among them', async () => {
    const { client } = session();
    const { tools } = await client.listTools();
    const result = await call('majordomus_capabilities');
    type Listed = { id: string; kind: string; title: string; stability: string; exposure: { mcp?: { tool?: string } } };
    const capabilities = result.structuredContent?.capabilities as Listed[];
    expect(capabilities.map((c) => c.id).sort()).toEqual([...BUILTIN_CAPABILITY_IDS].sort());
    // The tools the server lists are exactly the MCP exposures of the capabilities it lists.
    const exposed = capabilities.flatMap((c) => (c.exposure.mcp?.tool ? [c.exposure.mcp.tool] : []));
    expect(exposed.sort()).toEqual(tools.map((t) => t.name).sort());

    // Each listed capability is described the same by majordomus_capability, and a tool's
    // description there is the one tools/list gave.
    for (const listed of capabilities) {
      const described = await call('majordomus_capability', { id: listed.id });
      expect(described.isError, listed.id).toBeFalsy();
      expect(described.structuredContent, listed.id).toMatchObject({ ...listed, input_schema: { type: 'object' }, output_schema: { type: 'object' } });
      const tool = tools.find((t) => t.name === listed.exposure.mcp?.tool);
      if (tool) {
        expect(tool.annotations, tool.name).toMatchObject(described.structuredContent?.annotations as object);
        expect(described.structuredContent?.description, tool.name).toBe(tool.description);
      }
    }

    const byKind = async (kind: string): Promise<string[]> =>
      ((await call('majordomus_capabilities', { kind })).structuredContent?.capabilities as Listed[]).map((c) => c.id).sort();
    expect(await byKind('command')).toEqual(BUILTIN_COMMAND_IDS);
    expect(await byKind('query')).toEqual(capabilities.filter((c) => c.kind === 'query').map((c) => c.id).sort());
    expect((await byKind('query')).length + BUILTIN_COMMAND_IDS.length).toBe(capabilities.length);
  });

  it('answers majordomus_capability with the annotations and schemas of one capability', async () => {
    const result = await call('majordomus_capability', { id: 'objects.search' });
    expect(result.structuredContent).toMatchObject({
      id: 'objects.search',
      kind: 'query',
      annotations: { readOnlyHint: true },
      input_schema: { type: 'object', required: ['query'] },
    });
  });

  it('answers majordomus_peers with itself as peer p1', async () => {
    const result = await call('majordomus_peers');
    expect(result.structuredContent).toMatchObject({
      you: 'p1',
      peers: [{ id: 'p1', client: { name: 'majordomus-tests', version: '1.0.0' }, transport: 'stdio' }],
    });
  });

  it('shows an announcement made with majordomus_announce in majordomus_peers', async () => {
    const announced = await call('majordomus_announce', { intent: 'refactor the parser', paths: ['src/parser', 'src/index.ts'] });
    expect(announced.isError).toBeFalsy();
    expect(announced.structuredContent).toMatchObject({
      peer: { id: 'p1', announcement: { intent: 'refactor the parser', paths: ['src/index.ts', 'src/parser'] } },
      overlaps: [],
    });
    const peers = await call('majordomus_peers');
    expect(peers.structuredContent).toMatchObject({
      you: 'p1',
      peers: [{ id: 'p1', announcement: { intent: 'refactor the parser', paths: ['src/index.ts', 'src/parser'] } }],
    });
  });

  it('refuses an unknown tool with a JSON-RPC error naming it', async () => {
    const { client } = session();
    const error = await rpcError(() => client.callTool({ name: 'majordomus_nope', arguments: {} }));
    expect(error.message).toContain('majordomus_nope');
  });

  it('refuses arguments that fail the input schema with -32602', async () => {
    const { client } = session();
    const blank = await rpcError(() => client.callTool({ name: 'majordomus_search', arguments: { query: '   ' } }));
    expect(blank.code).toBe(-32602);
    expect(blank.message).toContain('blank');
    const kind = await rpcError(() => client.callTool({ name: 'majordomus_list', arguments: { kind: 'nope' } }));
    expect(kind.code).toBe(-32602);
    expect(kind.message).toContain('kind');
    const extra = await rpcError(() => client.callTool({ name: 'majordomus_info', arguments: { surprise: true } }));
    expect(extra.code).toBe(-32602);
  });

  it('answers majordomus_get of an unknown URI with an isError result and a readable text', async () => {
    const result = await call('majordomus_get', { uri: 'majordomus://rule/does-not-exist' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content[0]?.type).toBe('text');
    expect(result.content[0]?.text).toContain('majordomus://rule/does-not-exist');
  });

  it('refuses resources/read of an unknown URI with a JSON-RPC error', async () => {
    const { client } = session();
    const error = await rpcError(() => client.readResource({ uri: 'majordomus://rule/does-not-exist' }));
    expect(error.message).toContain('majordomus://rule/does-not-exist');
  });

  it('keeps answering after every kind of refusal', async () => {
    const { client } = session();
    await rpcError(() => client.callTool({ name: 'majordomus_nope', arguments: {} }));
    await rpcError(() => client.callTool({ name: 'majordomus_search', arguments: { query: '' } }));
    await rpcError(() => client.callTool({ name: 'majordomus_list', arguments: { kind: 'nope' } }));
    expect((await call('majordomus_get', { uri: 'majordomus://rule/nope' })).isError).toBe(true);
    await rpcError(() => client.readResource({ uri: 'majordomus://rule/nope' }));
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(BUILTIN_TOOLS.length);
    expect((await call('majordomus_peers')).structuredContent).toMatchObject({ you: 'p1' });
  });

  it(`leaves every tracked file byte-for-byte unchanged${mayWriteLocal ? ' and writes nothing outside .ai/local' : ' and writes no .ai/local'}`, async () => {
    // A checkout of its own: the shared one already holds the lease of this block's server.
    const fresh = await createFixtureRepo({ files: FILES });
    let own: McpConnection | undefined;
    try {
      const before = await treeState(fresh.root);
      expect(before.localExists).toBe(false);
      own = await connectMcp({ cwd: fresh.root, standalone, args });
      const { client } = own;
      await client.listTools();
      await client.listResources();
      await client.readResource({ uri: RULE_URI });
      for (const [name, args] of [
        ['majordomus_info', {}],
        ['majordomus_list', { kind: 'rule' }],
        ['majordomus_get', { uri: RULE_URI }],
        ['majordomus_get', { uri: 'majordomus://rule/nope' }],
        ['majordomus_search', { query: 'modules' }],
        ['majordomus_capabilities', {}],
        ['majordomus_capability', { id: 'peers.announce' }],
        ['majordomus_announce', { intent: 'edit', paths: ['.ai/repo'] }],
        ['majordomus_peers', {}],
      ] as const) {
        await client.callTool({ name, arguments: args });
      }
      await own.close();
      const after = await treeState(fresh.root);
      expect(after.tracked).toEqual(before.tracked);
      if (mayWriteLocal) {
        expect(statusOutside(after, '.ai/local/')).toEqual(statusOutside(before, '.ai/local/'));
      } else {
        expect(after.status).toBe(before.status);
        expect(after.localExists).toBe(false);
      }
    } finally {
      await own?.close();
      await fresh.cleanup();
    }
  });
});

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-pipe', version: '0.0.1' } },
});

function frame(line: string): { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: { code: number; message: string } } {
  return JSON.parse(line) as ReturnType<typeof frame>;
}

const answers = (id: number | null) => (line: string): boolean => {
  try {
    return frame(line).id === id;
  } catch {
    return false;
  }
};

describe.each(MODES)('$mode over raw pipes', ({ standalone, args }) => {
  let repo: FixtureRepo | undefined;
  let server: CliProcess | undefined;

  beforeEach(async () => {
    repo = await createFixtureRepo({ files: FILES });
    server = spawnCli(['mcp', ...(standalone ? ['--standalone'] : []), ...args], { cwd: repo.root });
  });

  afterEach(async () => {
    await server?.stop();
    server = undefined;
    await repo?.cleanup();
    repo = undefined;
  });

  it('answers malformed JSON with -32700 and still answers the next valid request', async () => {
    server!.send('{"jsonrpc":"2.0","id":1,"method":');
    const parseError = frame(await server!.waitForLine(answers(null)));
    expect(parseError).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    server!.send(INITIALIZE);
    const answer = frame(await server!.waitForLine(answers(1)));
    expect(answer.result).toMatchObject({ serverInfo: { name: 'majordomus' } });
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(frame(await server!.waitForLine(answers(2))).result).toMatchObject({ tools: expect.any(Array) });
  });

  it('writes nothing but JSON-RPC 2.0 frames to stdout, one per line', async () => {
    server!.send(INITIALIZE);
    server!.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'majordomus_info', arguments: {} } }));
    server!.send('this is not json');
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'resources/list' }));
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'no/such/method' }));
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'majordomus_get', arguments: { uri: 'majordomus://rule/nope' } } }));
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }));
    await server!.waitForLine(answers(7));
    await server!.stop();
    const stdout = server!.stdout();
    expect(stdout.endsWith('\n')).toBe(true);
    const lines = stdout.split('\n').slice(0, -1);
    expect(lines).toHaveLength(8); // every request and the parse error; the notification gets nothing
    for (const line of lines) {
      const parsed = frame(line);
      expect(parsed.jsonrpc, line).toBe('2.0');
      expect('result' in parsed || 'error' in parsed, line).toBe(true);
    }
    // Each frame is answered as soon as its answer is ready, not in the order the frames came.
    const ids = lines.map((line) => frame(line).id);
    expect([...ids].sort((a, b) => String(a).localeCompare(String(b)))).toEqual([1, 2, 3, 4, 5, 6, 7, null]);
    expect(frame(lines[ids.indexOf(5)]!).error?.code).toBe(-32601);
  });

  it('exits 0 when stdin closes', async () => {
    server!.send(INITIALIZE);
    await server!.waitForLine(answers(1));
    server!.child.stdin.end();
    const { code, signal } = await withTimeout(server!.exited, 20_000, 'the exit after stdin closed');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });

  it('exits 0 without a crash trace when its stdout pipe breaks', async () => {
    server!.send(INITIALIZE);
    await server!.waitForLine(answers(1));
    server!.child.stdout.destroy();
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    server!.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    server!.child.stdin.end();
    const { code, signal } = await withTimeout(server!.exited, 20_000, 'the exit after stdout broke');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const stderr = server!.stderr();
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stderr).not.toMatch(/Error:|EPIPE|MAJ_INTERNAL|Unhandled|Uncaught/);
  });
});
