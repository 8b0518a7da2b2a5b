/** An MCP backend over a runtime in this thread: the owner's stdio session and `--standalone`. */
import type { Runtime } from '../runtime/runtime.js';
import { toolTable } from './projection.js';
import type { McpBackend } from './session.js';

export function localBackend(runtime: Runtime, transport: 'stdio' | 'http'): McpBackend {
  const tools = toolTable(runtime.registry.catalog);
  return {
    tools,
    invoke: async (capabilityId, args, caller) => JSON.stringify(await runtime.invoke(capabilityId, args, caller)) ?? 'null',
    objects: () => runtime.layer.index.objects,
    object: (uri) => runtime.layer.get(uri),
    join: async (client, preferred) => runtime.join(client, transport, preferred),
    leave: (peerId) => runtime.leave(peerId),
    instructions: async (peerId) => runtime.instructions(peerId),
  };
}
