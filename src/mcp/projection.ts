/**
 * The MCP view of the registry: tools from catalog entries with a tool exposure, resources from
 * the layer's objects. Nothing here names a particular capability.
 */
import type { CapabilityCatalog, CapabilityEntry } from '../registry/catalog.js';
import type { TaskCompanions } from '../registry/descriptor.js';
import type { LayerObject } from '../layer/types.js';

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: CapabilityEntry['annotations'] & { title: string };
  /** MCP 2025-11-25: whether a call may ask to run as a task (listed only to a session that can). */
  execution?: { taskSupport: 'optional' };
}

export interface McpResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  size: number;
}

export interface ToolTable {
  tools: McpTool[];
  /** tool name → capability id */
  capabilityOf(name: string): string | undefined;
  /** Capabilities read as resources: fixed URIs (listed) and URI templates (`{name}` segments). */
  resources: ResourceRoute[];
  /**
   * The tools that start, drive or read other agents, each with its line of the instructions (if
   * it has one): a session at the delegation limit is offered none of them.
   */
  delegating?: ReadonlyMap<string, string | null>;
  /** The tools that may run as an MCP task, by name, and the capabilities that answer their tasks. */
  tasks?: ReadonlyMap<string, TaskCompanions>;
}

export interface ResourceRoute {
  /** A URI, or a template such as `majordomus://sessions/{session}/{part}`. */
  uriTemplate: string;
  capabilityId: string;
  title: string;
  description: string;
  /** Whether the URI has placeholders (listed by resources/templates/list). */
  templated: boolean;
  /** The capability's input for `uri`, or null when the URI is not this route's. */
  match(uri: string): Record<string, string> | null;
}

/** A route for one resource exposure; each `{name}` stands for one path segment. */
export function resourceRoute(uriTemplate: string, entry: Pick<CapabilityEntry, 'id' | 'title' | 'description'>): ResourceRoute {
  const names: string[] = [];
  const pattern = uriTemplate
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const name = /^\{([a-z_]+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      names.push(name);
      return '([^/?#]+)';
    })
    .join('');
  const regex = new RegExp(`^${pattern}$`);
  return {
    uriTemplate,
    capabilityId: entry.id,
    title: entry.title,
    description: entry.description,
    templated: names.length > 0,
    match(uri) {
      const found = regex.exec(uri);
      if (!found) return null;
      const input: Record<string, string> = {};
      try {
        names.forEach((name, i) => (input[name] = decodeURIComponent(found[i + 1] as string)));
      } catch {
        return null; // a malformed percent-escape names nothing
      }
      return input;
    },
  };
}

export function toolTable(catalog: CapabilityCatalog): ToolTable {
  const byName = new Map<string, string>();
  const tools: McpTool[] = [];
  const resources: ResourceRoute[] = [];
  const delegating = new Map<string, string | null>();
  const tasks = new Map<string, TaskCompanions>();
  for (const entry of catalog.entries) {
    const uri = entry.exposure.mcp?.resource;
    if (uri !== undefined && entry.kind !== 'resource') resources.push(resourceRoute(uri, entry));
    const name = entry.exposure.mcp?.tool;
    if (name === undefined) continue;
    byName.set(name, entry.id);
    if (entry.delegation === true) delegating.set(name, entry.guidance?.replaceAll('{tool}', name) ?? null);
    if (entry.exposure.mcp?.task !== undefined) tasks.set(name, entry.exposure.mcp.task);
    tools.push({
      name,
      title: entry.title,
      description: entry.description,
      inputSchema: entry.input_schema,
      outputSchema: entry.output_schema,
      annotations: { title: entry.title, ...entry.annotations },
    });
  }
  tools.sort((a, b) => a.name.localeCompare(b.name));
  return { tools, capabilityOf: (name) => byName.get(name), resources, delegating, tasks };
}

/**
 * The tools one session is offered: none of the delegating ones at the delegation limit, and
 * `execution.taskSupport` on those that may run as a task when the session can ask for one.
 */
export function toolsFor(table: ToolTable, session: { delegates: boolean; tasks: boolean }): McpTool[] {
  const offered = session.delegates ? table.tools : table.tools.filter((tool) => !table.delegating?.has(tool.name));
  if (!session.tasks || table.tasks === undefined || table.tasks.size === 0) return offered;
  return offered.map((tool) => (table.tasks?.has(tool.name) ? { ...tool, execution: { taskSupport: 'optional' as const } } : tool));
}

export function resourceOf(object: LayerObject): McpResource {
  return {
    uri: object.uri,
    name: object.id,
    title: object.title,
    description: object.description,
    mimeType: object.media_type,
    size: object.provenance.size,
  };
}
