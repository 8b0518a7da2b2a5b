/**
 * The rules a registry must satisfy before anything is projected from it. Every violation is
 * collected (never just the first) and names every party involved.
 */
import { jsonSchemaOf, type JsonSchema } from './catalog.js';
import { methodFor, type CapabilityDescriptor } from './descriptor.js';

function types(node: JsonSchema): string[] {
  return typeof node.type === 'string' ? [node.type] : Array.isArray(node.type) ? (node.type as string[]) : [];
}

/**
 * Where an input schema accepts unbounded data: a string without `maxLength`, an array without
 * `maxItems` (enums and constants are bounded by their values). Every client-supplied value has a
 * bound, so no input can make a handler scan megabytes.
 */
export function unboundedInputs(node: JsonSchema, at = '(input)'): string[] {
  const found: string[] = [];
  if (node.enum === undefined && node.const === undefined) {
    if (types(node).includes('string') && typeof node.maxLength !== 'number') found.push(`${at} is a string without a maximum length`);
    if (types(node).includes('array') && typeof node.maxItems !== 'number') found.push(`${at} is an array without a maximum size`);
  }
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) {
    found.push(...unboundedInputs(child, at === '(input)' ? name : `${at}.${name}`));
  }
  if (typeof node.items === 'object' && node.items !== null) found.push(...unboundedInputs(node.items as JsonSchema, `${at}[]`));
  if (typeof node.additionalProperties === 'object' && node.additionalProperties !== null) {
    found.push(...unboundedInputs(node.additionalProperties as JsonSchema, `${at}.*`));
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const variant of (node[key] ?? []) as JsonSchema[]) found.push(...unboundedInputs(variant, at));
  }
  return found;
}

const ID = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;
const TOOL_NAME = /^[a-z0-9_]+$/;
const URI_PREFIX = 'majordomus://';
const ROUTE_PREFIX = '/api/v1/';

export function registryViolations(descriptors: readonly CapabilityDescriptor[]): string[] {
  const violations: string[] = [];
  const owners = {
    id: new Map<string, string[]>(),
    'tool name': new Map<string, string[]>(),
    'resource URI': new Map<string, string[]>(),
    route: new Map<string, string[]>(),
    'CLI path': new Map<string, string[]>(),
  };
  const claim = (what: keyof typeof owners, key: string, id: string): void => {
    const list = owners[what].get(key) ?? [];
    list.push(id);
    owners[what].set(key, list);
  };

  for (const d of descriptors) {
    claim('id', d.id, d.id);
    if (!ID.test(d.id)) violations.push(`${d.id}: id must be namespace.local in [a-z0-9_]`);

    for (const problem of unboundedInputs(jsonSchemaOf(d.input, 'input'))) violations.push(`${d.id}: ${problem}`);
    if (d.guidance !== undefined && d.exposure.mcp?.tool === undefined) {
      violations.push(`${d.id}: guidance is for the instructions, which name tools, but it has no MCP tool`);
    }

    if (d.volatile === true && d.kind !== 'query') violations.push(`${d.id}: only a query's answer can be remembered, so only a query is volatile`);

    const executable = d.kind === 'query' || d.kind === 'command';
    if (executable && !d.handler) violations.push(`${d.id}: a ${d.kind} needs a handler`);
    if (d.kind === 'resource' && d.handler) violations.push(`${d.id}: a resource has no handler`);

    const { mcp, http, cli } = d.exposure;
    if (mcp?.tool !== undefined) {
      claim('tool name', mcp.tool, d.id);
      if (!TOOL_NAME.test(mcp.tool)) violations.push(`${d.id}: tool name "${mcp.tool}" is not [a-z0-9_]+`);
      if (d.kind === 'resource') violations.push(`${d.id}: a resource cannot be an MCP tool`);
    }
    if (mcp?.resource !== undefined) {
      claim('resource URI', mcp.resource, d.id);
      if (!mcp.resource.startsWith(URI_PREFIX)) {
        violations.push(`${d.id}: resource URI "${mcp.resource}" is not ${URI_PREFIX}`);
      }
      if (d.kind === 'command') violations.push(`${d.id}: a command cannot be read as a resource`);
      const properties = Object.keys((jsonSchemaOf(d.input, 'input').properties ?? {}) as Record<string, unknown>);
      for (const [, name] of mcp.resource.matchAll(/\{([^}]*)\}/g)) {
        if (!properties.includes(name as string)) violations.push(`${d.id}: resource URI placeholder {${name}} is not an input of the capability`);
      }
    }
    if (http) {
      claim('route', `${http.method} ${http.path}`, d.id);
      if (!http.path.startsWith(ROUTE_PREFIX)) violations.push(`${d.id}: route "${http.path}" is not under ${ROUTE_PREFIX}`);
      const wanted = methodFor(d.kind);
      if (http.method !== wanted) {
        violations.push(`${d.id}: a ${d.kind} is bound to ${wanted}, not ${http.method}`);
      }
    }
    if (cli) {
      claim('CLI path', cli.path, d.id);
      if (d.reads === 'peers') violations.push(`${d.id}: a capability that reads the peer board has no CLI path`);
    }
  }

  // A tool's tasks are answered by two capabilities it names: a query and a command.
  const byId = new Map(descriptors.map((d) => [d.id, d]));
  for (const d of descriptors) {
    const task = d.exposure.mcp?.task;
    if (task === undefined) continue;
    if (d.exposure.mcp?.tool === undefined) violations.push(`${d.id}: only a tool can run as an MCP task`);
    for (const [role, id, kind] of [['state', task.state, 'query'], ['cancel', task.cancel, 'command']] as const) {
      const companion = byId.get(id);
      if (companion === undefined) violations.push(`${d.id}: its task ${role} capability ${id} does not exist`);
      else if (companion.kind !== kind) violations.push(`${d.id}: its task ${role} capability ${id} is a ${companion.kind}, not a ${kind}`);
    }
  }

  for (const [what, map] of Object.entries(owners)) {
    for (const [key, ids] of map) {
      if (ids.length > 1) violations.push(`duplicate ${what} "${key}": ${ids.join(', ')}`);
    }
  }
  return violations;
}
