/**
 * Reads a client's own files in the user's home (`~/.claude.json`, `~/.codex/config.toml`,
 * `~/.gemini/trustedFolders.json`) to report the approval or trust they record. Read only: the
 * doctor never writes outside the repository. A link is followed (dotfiles are often links), the
 * size is bounded, and a file that is missing or unreadable is said, never thrown.
 */
import { homedir } from 'node:os';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { errorMessage } from '../platform/errors.js';
import type { ChildEnv } from '../platform/child-env.js';

/** `~/.claude.json` keeps every project's history beside its settings; it may be large. */
const MAX_USER_FILE_BYTES = 64 * 1024 * 1024;

export type UserFile = { state: 'missing' } | { state: 'unreadable'; why: string } | { state: 'document'; document: unknown };

/** The user's home as the clients see it: HOME, else the account's. */
export function homeOf(env: ChildEnv): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
}

/** A user directory a client lets a variable move (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`), else its default below home. */
export function clientDirectory(env: ChildEnv, variable: string, below: string): string {
  const moved = env[variable];
  return moved !== undefined && moved !== '' ? moved : join(homeOf(env), below);
}

async function readText(path: string): Promise<{ text: string } | UserFile> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return { state: 'unreadable', why: `${path} is not a regular file` };
    if (info.size > MAX_USER_FILE_BYTES) return { state: 'unreadable', why: `${path} is larger than ${MAX_USER_FILE_BYTES} bytes` };
    return { text: await readFile(path, 'utf8') };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    return { state: 'unreadable', why: `${path}: ${errorMessage(error)}` };
  }
}

/** A JSON file of the user's (comments allowed, as the clients' own loaders allow them). */
export async function readUserJson(path: string): Promise<UserFile> {
  const read = await readText(path);
  if (!('text' in read)) return read;
  const errors: ParseError[] = [];
  const document: unknown = parseJsonc(read.text, errors, { allowTrailingComma: true });
  return errors.length > 0 ? { state: 'unreadable', why: `${path} is not valid JSON` } : { state: 'document', document };
}

/** A TOML file of the user's. */
export async function readUserToml(path: string): Promise<UserFile> {
  const read = await readText(path);
  if (!('text' in read)) return read;
  try {
    return { state: 'document', document: parseToml(read.text) };
  } catch (error) {
    return { state: 'unreadable', why: `${path} is not valid TOML (${errorMessage(error).split('\n')[0] ?? ''})` };
  }
}

/** The object at `key` of `value`, or an empty one. */
export function objectAt(value: unknown, key: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const inner = (value as Record<string, unknown>)[key];
  return inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : {};
}
