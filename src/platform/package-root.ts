import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// This module runs from `src/` (tests) and from `dist/src/` (the build): the package root is the
// nearest ancestor with a package.json.
function findPackageRoot(): string {
  const near = new URL('../../', import.meta.url);
  return fileURLToPath(existsSync(new URL('package.json', near)) ? near : new URL('../../..', import.meta.url));
}

/** Absolute path of the installed package (where package.json and docs/ live), with a trailing slash. */
export const PACKAGE_ROOT: string = findPackageRoot();
