/** The layer a started server would serve: found, its manifest valid, and its diagnostics (what `mcp --inspect` shows). */
import { formatDiagnostic, loadLayer, type LayerSelection } from '../layer/load.js';
import { MajordomusError, errorMessage } from '../platform/errors.js';
import { finding, type Finding } from './findings.js';

/** The most diagnostics listed in the report; `majordomus mcp --inspect` lists them all. */
const LISTED_DIAGNOSTICS = 5;

export async function layerFinding(root: string, selection: LayerSelection): Promise<Finding> {
  try {
    const index = await loadLayer({ cwd: root, discovery: selection.discovery, strict: false });
    const served = `${index.objects.length} ${index.objects.length === 1 ? 'object' : 'objects'} (discovery ${index.discovery})`;
    if (index.state === 'ok') return finding('layer', 'ok', `the layer at ${index.root} serves ${served}, no diagnostics`);
    const listed = index.diagnostics.slice(0, LISTED_DIAGNOSTICS).map((diagnostic) => `\n  ${formatDiagnostic(diagnostic)}`);
    const more = index.diagnostics.length > LISTED_DIAGNOSTICS ? `\n  … and ${index.diagnostics.length - LISTED_DIAGNOSTICS} more` : '';
    return finding(
      'layer',
      'warn',
      `the layer at ${index.root} serves ${served} and leaves out what has a diagnostic (${index.diagnostics.length}):${listed.join('')}${more}`,
      'fix the files named; `majordomus mcp --inspect` lists every diagnostic (the server serves the rest meanwhile)',
    );
  } catch (error) {
    if (error instanceof MajordomusError && error.code === 'MAJ_NO_ROOT') {
      return finding('layer', 'fail', `no .ai/manifest.yaml at or above ${root}: a started server exits at once (MAJ_NO_ROOT)`, 'run `majordomus init` in the repository');
    }
    const code = error instanceof MajordomusError ? `${error.code}: ` : '';
    return finding('layer', 'fail', `a started server would refuse the layer: ${code}${errorMessage(error)}`, 'fix what the message names; `majordomus mcp --inspect` shows the same');
  }
}
