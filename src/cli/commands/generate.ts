/** `majordomus generate [--check]`: docs/generated/* from the registry. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EXIT, MajordomusError } from '../../platform/errors.js';
import { generatedFiles } from '../../generate/files.js';
import { log } from '../../platform/log.js';
import { PACKAGE_ROOT } from '../../platform/package-root.js';
import { builtinRegistry } from '../../runtime/load.js';
import { VERSION } from '../../platform/version.js';
import { usageError, type ParsedArgs } from '../args.js';

async function currentContent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

export async function runGenerate(args: ParsedArgs): Promise<number> {
  if (args.positionals.length > 0) throw usageError('generate takes no arguments');
  const files = generatedFiles(builtinRegistry().catalog, VERSION);
  const stale: string[] = [];
  for (const file of files) {
    const target = join(PACKAGE_ROOT, file.path);
    if ((await currentContent(target)) === file.content) continue;
    if (args.options.check) {
      stale.push(file.path);
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.content);
    log.info(`wrote ${file.path}`);
  }
  if (stale.length > 0) {
    throw new MajordomusError('MAJ_GENERATED_STALE', `stale: ${stale.join(', ')}; run \`majordomus generate\``);
  }
  if (args.options.check) log.info(`docs/generated/ is up to date (${files.length} files)`);
  return EXIT.ok;
}
