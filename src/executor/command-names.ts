/**
 * Refusal by name: a bash command that names a protected file — literally (`cat .env`,
 * `git show HEAD:.env`) or by a glob that matches one in the checkout (`cat .e*`) — is refused
 * before it runs, so the transcript shows a refusal rather than a puzzling empty file. This is a
 * courtesy, not the guarantee: a name built at run time (`$(printf …)`) passes, and masking and
 * redaction are what stop it (docs/EXECUTOR-FLOOR.md).
 */
import { basename, isAbsolute, relative, resolve } from 'node:path';
import picomatch from 'picomatch';
import type { Floor } from '../floor/rules.js';
import { floorReason } from '../floor/rules.js';
import { insidePath } from '../platform/confine.js';
import type { ProtectedFile } from '../floor/protected-files.js';
import type { ToolContext } from './tool.js';
import { toPosix } from '../platform/walk.js';

/** Shell syntax between words: what is left are the words a command could name a file with. */
const SEPARATORS = /[\s;|&<>()`$'"\\=,:{}]+/;
const GLOB_CHARS = /[*?[]/;

/** The words of a command that could name a file. */
export function commandWords(command: string): string[] {
  return command.split(SEPARATORS).filter((word) => word !== '' && word !== '-' && word !== '--');
}

/** Why the command is refused, or undefined when it names no protected file. */
export function namedProtectedFile(command: string, context: ToolContext, floor: Floor, files: readonly ProtectedFile[]): string | undefined {
  for (const word of commandWords(command)) {
    if (!GLOB_CHARS.test(word)) {
      const absolute = resolve(context.cwd, word);
      const relative = insidePath(context.root, absolute);
      const match = relative !== undefined && relative !== '' ? floor.match(relative) : floor.match(basename(word));
      if (match) return `the command names ${word}, ${floorReason(match)}`;
      continue;
    }
    // A glob is judged by what it would reach: as bash expands it (a path from the cwd), and as
    // find -name or grep --include use it (a file name) when it has letters enough to mean one.
    const matches = picomatch(word, { dot: false });
    const byName = !word.includes('/') && word.replace(/[*?[\]!{}]/g, '').length >= 2;
    for (const file of files) {
      const fromCwd = isAbsolute(word) ? file.path : toPosix(relative(context.cwd, file.path));
      if (matches(fromCwd) || (byName && matches(basename(file.path)))) {
        return `the glob ${word} matches ${file.relative}, ${floorReason(file.match)}`;
      }
    }
  }
  return undefined;
}
