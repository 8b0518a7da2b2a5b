/**
 * The kind decides the MCP annotations and the HTTP method (SPEC §4). Covers:
 * - a query and a resource are read-only and idempotent, a command is neither;
 * - no kind is destructive or open-world;
 * - a command is POST, a query and a resource GET;
 * - every builtin's catalogue entry and MCP tool carry the annotations of its kind, and every
 *   builtin route uses the method of its kind.
 */
import { describe, expect, it } from 'vitest';
import { toolTable } from '../../../src/mcp/projection.js';
import { BUILTIN_CAPABILITIES } from '../../../src/capabilities/index.js';
import { TOOL_EFFECTS } from '../../helpers/builtins.js';
import { annotationsFor, CAPABILITY_KINDS, methodFor } from '../../../src/registry/descriptor.js';
import { buildRegistry } from '../../../src/registry/registry.js';

describe('annotations and methods derived from the kind', () => {
  it('marks a query read-only and idempotent', () => {
    expect(annotationsFor('query')).toEqual({ readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false });
  });

  it('marks a resource read-only and idempotent', () => {
    expect(annotationsFor('resource')).toEqual({ readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false });
  });

  it('marks a command neither read-only nor idempotent, and still not destructive or open-world', () => {
    expect(annotationsFor('command')).toEqual({ readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false });
  });

  it('adds the declared effects: destructive for a command only, open world for any kind', () => {
    expect(annotationsFor('command', { destructive: true, openWorld: true })).toEqual({ readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: true });
    expect(annotationsFor('query', { destructive: true })).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('binds a command to POST and a query or a resource to GET', () => {
    expect(methodFor('command')).toBe('POST');
    expect(methodFor('query')).toBe('GET');
    expect(methodFor('resource')).toBe('GET');
    expect(CAPABILITY_KINDS).toEqual(['query', 'resource', 'command']);
  });

  it('gives every builtin catalogue entry and MCP tool the annotations of its kind and effects', () => {
    const registry = buildRegistry(BUILTIN_CAPABILITIES);
    for (const entry of registry.catalog.entries) {
      const tool = entry.exposure.mcp?.tool;
      expect(entry.annotations, entry.id).toEqual({ ...annotationsFor(entry.kind), ...(tool === undefined ? {} : TOOL_EFFECTS[tool]) });
    }
    const tools = toolTable(registry.catalog);
    expect(tools.tools.length).toBeGreaterThan(0);
    for (const tool of tools.tools) {
      const id = tools.capabilityOf(tool.name);
      const entry = id === undefined ? undefined : registry.catalog.byId(id);
      expect(entry, tool.name).toBeDefined();
      expect(tool.annotations, tool.name).toEqual({ title: entry?.title, ...annotationsFor(entry!.kind), ...TOOL_EFFECTS[tool.name] });
    }
  });

  it('binds every builtin route to the method of its kind', () => {
    for (const descriptor of BUILTIN_CAPABILITIES) {
      if (descriptor.exposure.http) expect(descriptor.exposure.http.method, descriptor.id).toBe(methodFor(descriptor.kind));
    }
    expect(BUILTIN_CAPABILITIES.find((d) => d.id === 'peers.announce')?.exposure.http?.method).toBe('POST');
  });
});
