/**
 * What `init` would write, computed before anything is written: every file's text before and
 * after, and every conflict. All or nothing — the command writes only a plan without conflicts
 * (or with `--force`), so a refusal never leaves a half-initialised repository.
 */
import { join } from 'node:path';
import { MajordomusError } from '../platform/errors.js';
import { assertWritableInside, ConfineError, readRegular } from '../platform/confine.js';
import { readManifest } from '../layer/manifest.js';
import { clientConfigs, type ClientConfig } from './clients.js';
import { missingPath } from './command-path.js';
import { mergeIgnoreLine } from './gitignore.js';
import { freshJson, mergeJsonEntry } from './json-config.js';
import { MANIFEST_FILE, minimalManifest } from './manifest-file.js';
import type { EntryMerge } from './merge.js';
import type { ServerCommand } from './server-command.js';
import { mergeTomlTable, renderTomlTable } from './toml-config.js';

export type FileState = 'created' | 'updated' | 'unchanged';

/** One file of the plan. */
export interface PlannedFile {
  /** Relative to the root, `/` separators. */
  path: string;
  /** null: the file does not exist yet. */
  before: string | null;
  after: string;
  state: FileState;
  /** The client this file configures, if it is a client configuration. */
  client?: string;
  /** A differing entry of ours that is (with --force) or would be (without) replaced: what it held. */
  conflict: string | null;
  /** That differing entry names a path that does not exist on this machine: why (a launcher of another machine). */
  stale?: string;
}

export interface InitPlan {
  root: string;
  files: PlannedFile[];
  /** The planned files whose conflict `--force` was not given for. */
  conflicts: PlannedFile[];
}

export interface PlanOptions {
  /** What the configurations start. */
  server: ServerCommand;
  force: boolean;
}

/** The largest file `init` reads to merge into. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/**
 * Refuses a target whose path passes through a symbolic link or leaves the repository: a write
 * there would land outside it (`.codex -> ~/.codex`). Asked before reading and again before writing.
 */
export async function confineTarget(root: string, path: string): Promise<void> {
  try {
    await assertWritableInside(root, path);
  } catch (error) {
    if (error instanceof ConfineError && error.reason !== 'not_regular') {
      throw new MajordomusError('MAJ_UNSAFE_TARGET', `${path}: ${error.detail}; init writes only inside the repository, never through a link, and nothing was written`);
    }
    if (error instanceof ConfineError) throw new MajordomusError('MAJ_CONFIG_UNPARSABLE', `${path}: ${error.detail}; nothing was written`);
    throw error;
  }
}

/** A file's text, or null when there is none; anything but a regular file inside the repository is refused. */
async function readText(root: string, path: string): Promise<string | null> {
  await confineTarget(root, path);
  const read = await readRegular(join(root, path), MAX_CONFIG_BYTES);
  if (read.ok) return read.bytes.toString('utf8');
  if (read.reason === 'missing') return null;
  throw new MajordomusError('MAJ_CONFIG_UNPARSABLE', `${path}: ${read.detail}; nothing was written`);
}

function planned(path: string, before: string | null, merge: EntryMerge): PlannedFile {
  const state: FileState = before === null ? 'created' : merge.text === before ? 'unchanged' : 'updated';
  return { path, before, after: merge.text, state, conflict: merge.conflict };
}

/** The client's file as planned, with a differing entry that names a path missing here flagged. */
async function plannedClient(root: string, config: ClientConfig, path: string, before: string | null, merge: EntryMerge): Promise<PlannedFile> {
  const file = { ...planned(path, before, merge), client: config.client };
  const command = merge.existing === undefined ? null : config.readCommand(merge.existing);
  const stale = command === null ? null : await missingPath(command.command, root);
  if (stale === null || file.conflict === null) return file;
  return { ...file, conflict: `${file.conflict}, whose command ${stale}`, stale };
}

async function planClient(root: string, config: ClientConfig, force: boolean): Promise<PlannedFile> {
  let path = config.files[0] as string;
  let before: string | null = null;
  for (const candidate of config.files) {
    const text = await readText(root, candidate);
    if (text !== null) {
      path = candidate;
      before = text;
      break;
    }
  }
  if (config.format === 'json') {
    // An empty file (touched, never written) is as good as none.
    const merge =
      before === null || before.trim() === '' ? { text: freshJson(config.fresh), conflict: null } : mergeJsonEntry(path, before, config.path, config.entry, force);
    return plannedClient(root, config, path, before, merge);
  }
  const merge = before === null ? { text: renderTomlTable(config.path, config.entry), conflict: null } : mergeTomlTable(path, before, config.path, config.entry, force);
  return plannedClient(root, config, path, before, merge);
}

/** The plan for `root`: the manifest (when there is no layer), .gitignore, the four configurations. */
export async function planInit(root: string, options: PlanOptions): Promise<InitPlan> {
  const files: PlannedFile[] = [];
  const manifest = await readText(root, MANIFEST_FILE);
  let localPath: string;
  if (manifest === null) {
    const text = minimalManifest();
    files.push({ path: MANIFEST_FILE, before: null, after: text, state: 'created', conflict: null });
    localPath = '.ai/local';
  } else {
    // A layer is there already: left alone, but it names the directory to ignore.
    localPath = (await readManifest(join(root, MANIFEST_FILE))).localPath;
    files.push({ path: MANIFEST_FILE, before: manifest, after: manifest, state: 'unchanged', conflict: null });
  }
  const ignore = await readText(root, '.gitignore');
  files.push(planned('.gitignore', ignore, { text: mergeIgnoreLine(ignore, localPath), conflict: null }));
  for (const config of clientConfigs(options.server)) files.push(await planClient(root, config, options.force));
  return { root, files, conflicts: options.force ? [] : files.filter((file) => file.conflict !== null) };
}
