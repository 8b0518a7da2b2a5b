/**
 * A copy of one built module and everything it imports, for a test that runs it as another user.
 * The checkout may live where no other user can enter (a 0700 home, a `mktemp -d` folder), so a
 * process that drops to `nobody` cannot load the checkout's dist/; it can load this copy, which is
 * readable by everyone. The copy keeps the package's layout (package.json, dist/…,
 * node_modules/<package>), so the modules find each other and the package root as they do at home.
 *
 * Imports are read from tsc's output (static, re-exports, side effects, and `import('…')` of a
 * literal); a package imported by name is copied whole, with the packages its package.json depends
 * on.
 */
import { chmod, cp, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';

const IMPORTS = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];

/** The package a bare specifier names: `zod`, `@scope/name` (a subpath dropped). */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** Every module file `entry` reaches by relative imports, and the packages they import by name. */
async function closure(entry: string): Promise<{ modules: Set<string>; packages: Set<string> }> {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (modules.has(file)) continue;
    modules.add(file);
    const text = await readFile(file, 'utf8');
    for (const pattern of IMPORTS) {
      for (const [, specifier] of text.matchAll(pattern)) {
        if (specifier === undefined || specifier.startsWith('node:')) continue;
        if (specifier.startsWith('.')) pending.push(resolve(dirname(file), specifier));
        else packages.add(packageName(specifier));
      }
    }
  }
  return { modules, packages };
}

/** Makes `path` and everything below it readable (and its directories enterable) by everyone. */
async function readableByAll(path: string): Promise<void> {
  const info = await stat(path);
  await chmod(path, (info.mode & 0o777) | (info.isDirectory() ? 0o555 : 0o444));
  if (info.isDirectory()) for (const entry of await readdir(path)) await readableByAll(join(path, entry));
}

/**
 * Copies `entry` (a module under `packageRoot`) and its closure into `into`, readable by everyone
 * (`into` itself included); answers the entry's path in the copy.
 */
export async function copyModuleClosure(packageRoot: string, entry: string, into: string): Promise<string> {
  const { modules, packages } = await closure(entry);
  await cp(join(packageRoot, 'package.json'), join(into, 'package.json'));
  for (const module of modules) await cp(module, join(into, relative(packageRoot, module)));
  const copied = new Set<string>();
  const pendingPackages = [...packages];
  for (let name = pendingPackages.pop(); name !== undefined; name = pendingPackages.pop()) {
    if (copied.has(name)) continue;
    copied.add(name);
    const from = join(packageRoot, 'node_modules', name);
    await cp(from, join(into, 'node_modules', name), { recursive: true, dereference: true });
    const manifest = JSON.parse(await readFile(join(from, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    pendingPackages.push(...Object.keys(manifest.dependencies ?? {}));
  }
  await readableByAll(into);
  return join(into, relative(packageRoot, entry));
}
