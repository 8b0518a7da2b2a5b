/** The manifest `init` writes in a repository without a layer: the defaults, said explicitly. */
import { MANIFEST_SCHEMA_ID } from '../layer/manifest.js';

export const MANIFEST_FILE = '.ai/manifest.yaml';

/** A minimal valid manifest (SPEC §3): every section enabled, the default halves. */
export function minimalManifest(): string {
  return [
    '# The repository\'s AI layer, served by majordomus (rules, skills, prompts, … under .ai/repo/).',
    '# .ai/local/ holds this checkout\'s state (the shared server\'s lease, sessions) and is git-ignored.',
    `schema: ${MANIFEST_SCHEMA_ID}`,
    'repo: {path: .ai/repo}',
    'local: {path: .ai/local}',
    '',
  ].join('\n');
}
