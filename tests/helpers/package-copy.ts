/**
 * Throwaway copies of the package, for tests that must change the package itself (its
 * docs/generated/, its build, its sources) without touching the real one. The copy links our
 * node_modules instead of installing anything.
 */
import { chmod, cp, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './cli.js';
import { git } from './fixture-repo.js';

/** What the built executable needs to run and to find itself: `generate` writes into docs/generated. */
export const BUILT_PARTS = ['package.json', 'dist', 'docs/generated', 'page'] as const;
/** What the launcher needs to build: the sources and the build configuration, no dist/. */
export const SOURCE_PARTS = ['package.json', 'package-lock.json', 'rolldown.config.mjs', 'scripts', 'src', 'workers', 'bin', 'page'] as const;

export interface PackageCopyOptions {
  /** Link `<copy>/node_modules` to ours. Default true. */
  nodeModules?: boolean;
  /**
   * Make the copy a source checkout (`git init` at its root), as the launcher wants before it
   * installs or builds anything; without it the copy is shaped like an installed package.
   */
  git?: boolean;
}

/** Copies `parts` (paths relative to the package root) into `<into>/package` and answers that path. */
export async function copyPackage(into: string, parts: readonly string[], options: PackageCopyOptions = {}): Promise<string> {
  const root = join(into, 'package');
  await mkdir(root);
  for (const part of parts) await cp(join(PACKAGE_ROOT, part), join(root, part), { recursive: true });
  if (parts.includes('bin')) await chmod(join(root, 'bin/majordomus-mcp'), 0o755);
  if (options.nodeModules ?? true) await symlink(join(PACKAGE_ROOT, 'node_modules'), join(root, 'node_modules'));
  if (options.git === true) await git(root, ['init', '-q']);
  return root;
}
