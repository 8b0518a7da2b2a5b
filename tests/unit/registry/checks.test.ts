/**
 * The registry's refusals (SPEC §4). Covers:
 * - one refusal per rule: duplicate id, tool name, resource URI, route and CLI path; a tool name
 *   outside [a-z0-9_]+; a URI outside majordomus://; a route outside /api/v1/; a query or command
 *   without a handler and a resource with one; a command bound to GET and a query bound to POST;
 * - an input string without a maximum length or an input array without a maximum size, at any
 *   depth (enums and constants are bounded by their values); guidance on a capability without an
 *   MCP tool; `volatile` on anything but a query; a tool's MCP task companions that do not exist
 *   or are of the wrong kind, and a task on something that is not a tool;
 * - every violation listed at once, every party named;
 * - the builtins build.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MajordomusError } from '../../../src/platform/errors.js';
import { BUILTIN_CAPABILITIES } from '../../../src/capabilities/index.js';
import { registryViolations } from '../../../src/registry/checks.js';
import type { CapabilityDescriptor } from '../../../src/registry/descriptor.js';
import { buildRegistry } from '../../../src/registry/registry.js';
import { BUILTIN_CAPABILITY_IDS } from '../../helpers/builtins.js';

/** A valid query; `overrides` makes it invalid in one way. */
function capability(id: string, overrides: Partial<CapabilityDescriptor> = {}): CapabilityDescriptor {
  const local = id.replace('.', '_');
  return {
    id,
    kind: 'query',
    title: id,
    description: `the ${id} capability`,
    input: z.object({}).strict(),
    output: z.object({ ok: z.boolean() }),
    exposure: {
      mcp: { tool: `t_${local}` },
      http: { method: 'GET', path: `/api/v1/${local}` },
      cli: { path: `cli ${local}` },
    },
    stability: 'stable',
    reads: 'registry',
    handler: () => ({ ok: true }),
    ...overrides,
  };
}

function resource(id: string, overrides: Partial<CapabilityDescriptor> = {}): CapabilityDescriptor {
  const local = id.replace('.', '_');
  const { handler: _none, ...query } = capability(id);
  return { ...query, kind: 'resource', exposure: { mcp: { resource: `majordomus://resource/${local}` } }, ...overrides };
}

/** The message `buildRegistry` refuses with. */
function refusal(descriptors: CapabilityDescriptor[]): string {
  try {
    buildRegistry(descriptors);
  } catch (error) {
    expect(error).toBeInstanceOf(MajordomusError);
    expect((error as MajordomusError).code).toBe('MAJ_REGISTRY_INVALID');
    return (error as MajordomusError).message;
  }
  throw new Error('the registry built, but a refusal was expected');
}

describe('registry checks', () => {
  it('builds a registry of valid capabilities without a violation', () => {
    const descriptors = [capability('a.one'), capability('b.two'), resource('c.three')];
    expect(registryViolations(descriptors)).toEqual([]);
    expect(buildRegistry(descriptors).descriptors.map((d) => d.id)).toEqual(['a.one', 'b.two', 'c.three']);
  });

  it('refuses a duplicate id and names it', () => {
    const message = refusal([capability('a.one'), capability('a.one', { exposure: {} })]);
    expect(message).toMatch(/duplicate id "a\.one": a\.one, a\.one/);
  });

  it('refuses a duplicate tool name and names both capabilities', () => {
    const message = refusal([
      capability('a.one', { exposure: { mcp: { tool: 'shared_tool' } } }),
      capability('b.two', { exposure: { mcp: { tool: 'shared_tool' } } }),
    ]);
    expect(message).toMatch(/duplicate tool name "shared_tool": a\.one, b\.two/);
  });

  it('refuses a duplicate resource URI and names both capabilities', () => {
    const uri = 'majordomus://resource/same';
    const message = refusal([resource('a.one', { exposure: { mcp: { resource: uri } } }), resource('b.two', { exposure: { mcp: { resource: uri } } })]);
    expect(message).toContain(`duplicate resource URI "${uri}": a.one, b.two`);
  });

  it('refuses a duplicate route and names both capabilities', () => {
    const http = { method: 'GET', path: '/api/v1/same' } as const;
    const message = refusal([capability('a.one', { exposure: { http } }), capability('b.two', { exposure: { http } })]);
    expect(message).toContain('duplicate route "GET /api/v1/same": a.one, b.two');
  });

  it('refuses a duplicate CLI path and names both capabilities', () => {
    const message = refusal([
      capability('a.one', { exposure: { cli: { path: 'things list' } } }),
      capability('b.two', { exposure: { cli: { path: 'things list' } } }),
    ]);
    expect(message).toContain('duplicate CLI path "things list": a.one, b.two');
  });

  it('refuses a tool name outside [a-z0-9_]+ and names the capability and the name', () => {
    const message = refusal([capability('a.one', { exposure: { mcp: { tool: 'Bad-Name' } } })]);
    expect(message).toMatch(/a\.one: tool name "Bad-Name" is not \[a-z0-9_\]\+/);
  });

  it('refuses a resource URI outside majordomus:// and names the capability and the URI', () => {
    const message = refusal([resource('a.one', { exposure: { mcp: { resource: 'https://example.com/x' } } })]);
    expect(message).toContain('a.one: resource URI "https://example.com/x" is not majordomus://');
  });

  it('refuses a command read as a resource, and a resource URI placeholder that is not an input', () => {
    const command = capability('a.act', { kind: 'command', exposure: { mcp: { resource: 'majordomus://act' }, http: { method: 'POST', path: '/api/v1/act' } } });
    const query = capability('a.part', {
      input: z.object({ thing: z.string().max(10) }).strict(),
      exposure: { mcp: { resource: 'majordomus://things/{thing}/{part}' } },
    });
    expect(registryViolations([command, query])).toEqual([
      'a.act: a command cannot be read as a resource',
      'a.part: resource URI placeholder {part} is not an input of the capability',
    ]);
  });

  it('refuses a route outside /api/v1/ and names the capability and the route', () => {
    const message = refusal([capability('a.one', { exposure: { http: { method: 'GET', path: '/api/v2/things' } } })]);
    expect(message).toContain('a.one: route "/api/v2/things" is not under /api/v1/');
  });

  it('refuses a query and a command without a handler', () => {
    const { handler: _q, ...query } = capability('a.one');
    const { handler: _c, ...command } = capability('b.two', {
      kind: 'command',
      exposure: { http: { method: 'POST', path: '/api/v1/b_two' } },
    });
    const message = refusal([query, command]);
    expect(message).toContain('a.one: a query needs a handler');
    expect(message).toContain('b.two: a command needs a handler');
  });

  it('refuses a resource with a handler', () => {
    const message = refusal([resource('a.one', { handler: () => ({ ok: true }) })]);
    expect(message).toContain('a.one: a resource has no handler');
  });

  it('refuses volatile on anything but a query', () => {
    const command = capability('a.command', { kind: 'command', volatile: true, exposure: { http: { method: 'POST', path: '/api/v1/a/command' } } });
    expect(refusal([command])).toContain('a.command: only a query\'s answer can be remembered, so only a query is volatile');
    expect(() => buildRegistry([capability('a.query', { volatile: true })])).not.toThrow();
  });

  it('refuses a command bound to GET', () => {
    const message = refusal([capability('a.one', { kind: 'command', exposure: { http: { method: 'GET', path: '/api/v1/a' } } })]);
    expect(message).toContain('a.one: a command is bound to POST, not GET');
  });

  it('refuses a query bound to POST', () => {
    const message = refusal([capability('a.one', { exposure: { http: { method: 'POST', path: '/api/v1/a' } } })]);
    expect(message).toContain('a.one: a query is bound to GET, not POST');
  });

  it('lists every violation at once and names every party', () => {
    const { handler: _none, ...noHandler } = capability('d.four', { exposure: {} });
    const descriptors = [
      capability('a.one', { exposure: { mcp: { tool: 'clash' }, http: { method: 'POST', path: '/api/v1/a' } } }),
      capability('b.two', { exposure: { mcp: { tool: 'clash' }, http: { method: 'GET', path: '/v1/b' } } }),
      resource('c.three', { exposure: { mcp: { resource: 'file:///etc/passwd' } } }),
      noHandler,
    ];
    const violations = registryViolations(descriptors);
    expect(violations).toHaveLength(5);
    const message = refusal(descriptors);
    for (const expected of [
      'duplicate tool name "clash": a.one, b.two',
      'a.one: a query is bound to GET, not POST',
      'b.two: route "/v1/b" is not under /api/v1/',
      'c.three: resource URI "file:///etc/passwd" is not majordomus://',
      'd.four: a query needs a handler',
    ]) {
      expect(message).toContain(expected);
    }
  });

  it('refuses MCP task companions that do not exist or are not a query and a command, and a task on what is no tool', () => {
    const state = capability('t.state', { exposure: {} });
    const cancel = capability('t.cancel', { kind: 'command', exposure: {} });
    const message = refusal([
      capability('a.one', { exposure: { mcp: { tool: 'one', task: { state: 't.nothing', cancel: 't.state' } } } }),
      capability('b.two', { exposure: { mcp: { resource: 'majordomus://b', task: { state: 't.state', cancel: 't.cancel' } } } }),
      state,
      cancel,
    ]);
    expect(message).toContain('a.one: its task state capability t.nothing does not exist');
    expect(message).toContain('a.one: its task cancel capability t.state is a query, not a command');
    expect(message).toContain('b.two: only a tool can run as an MCP task');
    expect(registryViolations([capability('c.three', { exposure: { mcp: { tool: 'three', task: { state: 't.state', cancel: 't.cancel' } } } }), state, cancel])).toEqual([]);
  });

  it('builds the builtin capabilities', () => {
    expect(registryViolations(BUILTIN_CAPABILITIES)).toEqual([]);
    const registry = buildRegistry(BUILTIN_CAPABILITIES);
    expect(registry.descriptors.map((d) => d.id)).toEqual(BUILTIN_CAPABILITY_IDS);
  });

  it('refuses an input string without a maximum length and an input array without a maximum size, at any depth', () => {
    const unbounded = capability('a.loose', {
      input: z
        .object({
          query: z.string().min(1),
          tags: z.array(z.string().max(10)),
          filter: z.object({ names: z.array(z.string()).max(5) }).optional(),
          choice: z.union([z.string().max(3), z.number()]),
          kind: z.enum(['rule', 'skill']),
          exact: z.literal('x'),
        })
        .strict(),
    });
    const message = refusal([unbounded]);
    expect(message).toContain('a.loose: query is a string without a maximum length');
    expect(message).toContain('a.loose: tags is an array without a maximum size');
    expect(message).toContain('a.loose: filter.names[] is a string without a maximum length');
    expect(message).not.toContain('choice');
    expect(message).not.toContain('kind');
    expect(message).not.toContain('exact');
    expect(registryViolations([capability('a.bounded', { input: z.object({ q: z.string().max(100), list: z.array(z.string().max(9)).max(9) }).strict() })])).toEqual([]);
  });

  it('refuses guidance for the instructions on a capability that has no MCP tool to name', () => {
    const message = refusal([capability('a.quiet', { guidance: 'Use {tool}.', exposure: { http: { method: 'GET', path: '/api/v1/quiet' } } })]);
    expect(message).toContain('a.quiet: guidance is for the instructions, which name tools, but it has no MCP tool');
  });
});
