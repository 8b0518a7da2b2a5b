/**
 * The MCP view of the registry: tools from catalog entries with a tool exposure, resources from
 * the layer's objects. Nothing here names a particular capability.
 */
import type { CapabilityCatalog, CapabilityEntry } from '../registry/catalog.js';
import type { LayerObject } from '../layer/types.js';

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: CapabilityEntry['annotations'] & { title: string };
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
}

export function toolTable(catalog: CapabilityCatalog): ToolTable {
  const byName = new Map<string, string>();
  const tools: McpTool[] = [];
  for (const entry of catalog.entries) {
    const name = entry.exposure.mcp?.tool;
    if (name === undefined) continue;
    byName.set(name, entry.id);
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
  return { tools, capabilityOf: (name) => byName.get(name) };
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
