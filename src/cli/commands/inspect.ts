/** `majordomus mcp --inspect`: what would be served and every diagnostic. Writes nothing. */
import { EXIT } from '../../platform/errors.js';
import { toolTable } from '../../mcp/projection.js';
import { loadServing } from '../../runtime/load.js';
import type { LayerSelection } from '../../layer/load.js';

export async function runInspect(global: LayerSelection, format: 'text' | 'json'): Promise<number> {
  const { layer, registry } = await loadServing(global);
  const { index } = layer;
  const report = {
    root: index.root,
    repository_id: index.repository_id,
    discovery: index.discovery,
    state: index.state,
    counts: layer.countsByKind(),
    objects: index.objects.map((o) => ({ uri: o.uri, title: o.title, path: o.provenance.path })),
    tools: toolTable(registry.catalog).tools.map((t) => t.name),
    routes: registry.descriptors.flatMap((d) => (d.exposure.http ? [`${d.exposure.http.method} ${d.exposure.http.path}`] : [])),
    diagnostics: index.diagnostics,
  };
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`); // -- stdout-ok: the command's answer
    return EXIT.ok;
  }
  const lines = [
    `root: ${report.root}`,
    `repository_id: ${report.repository_id}`,
    `discovery: ${report.discovery}`,
    `state: ${report.state}`,
    `objects: ${report.objects.length}`,
    ...report.objects.map((o) => `  ${o.uri}  ${o.title}  (${o.path})`),
    `tools: ${report.tools.join(', ')}`,
    `routes: ${report.routes.length}`,
    ...report.routes.map((r) => `  ${r}`),
    `diagnostics: ${report.diagnostics.length}`,
    ...report.diagnostics.map((d) => `  ${d.severity} ${d.code} ${d.path}: ${d.message}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`); // -- stdout-ok: the command's answer
  return EXIT.ok;
}
