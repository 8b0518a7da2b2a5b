/**
 * Builds the index of a root whose manifest is already read: discover the candidate files, read
 * each one at most once (bounded concurrency, never following a link — neither at the file nor at
 * any directory above it — never reading an oversized file), validate it against its kind, then
 * drop identities claimed twice. Every refusal is a
 * diagnostic and the file is left out; the index still serves, `degraded`. The result is
 * deterministic: sorted objects and diagnostics, no timestamps.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { z } from 'zod';
import { log } from '../platform/log.js';
import { repositoryId } from './repository-id.js';
import { discover, type Undecodable } from './discovery.js';
import { isMapping, parseYaml, splitFrontMatter } from './front-matter.js';
import { checkMetadata, matchKind, mayHoldKind, objectId, objectUri, type KindSpec } from './kinds.js';
import type { Manifest } from './manifest.js';
import { ParsedFiles, type Outcome } from './parsed-files.js';
import { readRegularSync, RealDirectories } from '../platform/confine.js';
import type { Diagnostic, DiagnosticCode, DiscoveryMode, LayerIndex, LayerObject, ObjectKind } from './types.js';

/** Files larger than this are refused from their size alone; they are never opened. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;
/** How many files are read at once. */
export const READ_CONCURRENCY = 32;
/** How many files are read (synchronously) before the event loop gets a turn. */
const READS_PER_TURN = 64;


function problem(code: DiagnosticCode, path: string, message: string): { diagnostics: Diagnostic[] } {
  return { diagnostics: [{ severity: 'error', code, path, message }] };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Runs `task` over `items` with at most `limit` in flight; results keep the input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function readBytes(root: string, path: string, directories: RealDirectories): Promise<Buffer | { diagnostics: Diagnostic[] }> {
  // The file itself is opened without following a link; the directories above it are checked
  // first (remembered per directory), and confine confirms what was opened.
  const above = await directories.parentsOf(path);
  if (above.kind === 'symlink') {
    return problem('symlink', path, `${above.component} is a symbolic link to ${above.target}; links are never followed, so nothing below it is served`);
  }
  if (above.kind === 'not_directory') return problem('unreadable', path, `${above.component} is ${above.what}, not a directory`);
  // Synchronous: a few system calls on a small file cost microseconds, while each asynchronous
  // one is a round trip through libuv's thread pool (most of a build's time when the files are
  // not parsed again).
  const read = readRegularSync(join(root, path), MAX_FILE_BYTES, { parentsReal: true });
  if (read.ok) return read.bytes;
  switch (read.reason) {
    case 'symlink':
      return problem('symlink', path, read.detail.replace(/^is /, ''));
    case 'too_large':
      return problem('oversized', path, `${read.detail.replace(/^is /, '')} (4 MiB); it was not served`);
    case 'missing':
      return problem('unreadable', path, 'listed by discovery but missing from the working tree (ENOENT)');
    default:
      return problem('unreadable', path, read.detail.replace(/^is /, ''));
  }
}

/** A symlink diagnostic when `path`, where a directory of layer files could be, is a link. */
async function linkedContainer(root: string, path: string): Promise<Diagnostic | undefined> {
  const absolute = join(root, path);
  const info = await lstat(absolute).catch(() => undefined);
  if (info === undefined || !info.isSymbolicLink()) return undefined;
  const target = await readlink(absolute).catch(() => '?');
  return {
    severity: 'error',
    code: 'symlink',
    path,
    message: `a symbolic link to ${target} where layer files could be; links are never followed, so nothing below it is served`,
  };
}

function sortedTags(metadata: Record<string, unknown>): string[] {
  const tags = metadata.tags;
  if (!Array.isArray(tags)) return [];
  return [...new Set(tags.filter((tag): tag is string => typeof tag === 'string'))].sort(compare);
}

/** The diagnostic for a name that is not UTF-8, when it is where layer files could be. */
function undecodableName(entry: Undecodable, relative: string, enabled: ReadonlySet<ObjectKind>): Diagnostic | undefined {
  if (matchKind(relative, enabled) === undefined && !mayHoldKind(relative, enabled)) return undefined;
  const what = entry.directory ? 'the directory name' : 'the name';
  const consequence = entry.directory ? 'nothing below it is served' : 'it is not served';
  return {
    severity: 'error',
    code: 'invalid_utf8',
    path: entry.path,
    message: `${what} is not valid UTF-8 (shown with U+FFFD where its bytes do not decode); a path that cannot be named is not served, so ${consequence}`,
  };
}

async function indexFile(
  root: string,
  path: string,
  spec: KindSpec,
  pathIdentity: string,
  directories: RealDirectories,
  cache: ParsedFiles | undefined,
): Promise<Outcome> {
  const bytes = await readBytes(root, path, directories);
  if (!Buffer.isBuffer(bytes)) return bytes;
  if (cache === undefined) return indexBytes(path, spec, pathIdentity, bytes);
  // What a file becomes depends on its path, its kind and its bytes alone; the digest names the bytes.
  const key = `${spec.kind}\0${pathIdentity}\0${createHash('sha256').update(bytes).digest('base64')}`;
  const kept = cache.reuse(path, key);
  if (kept !== undefined) return kept;
  const outcome = indexBytes(path, spec, pathIdentity, bytes);
  cache.remember(path, key, outcome);
  return outcome;
}

/** What the bytes of one layer file make: its object, or why it is refused. */
function indexBytes(path: string, spec: KindSpec, pathIdentity: string, bytes: Buffer): Outcome {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return problem('invalid_utf8', path, 'not valid UTF-8');
  }

  let data: Record<string, unknown>;
  let body: string;
  let where: string;
  if (spec.format === 'markdown') {
    const split = splitFrontMatter(text);
    if (split.kind === 'error') return problem(split.code, path, split.message);
    if (split.kind === 'none' && spec.frontMatterRequired) {
      const required = Object.entries(spec.schema.shape)
        .filter(([, field]) => !z.safeParse(field, undefined).success)
        .map(([key]) => key);
      return problem(
        'missing_front_matter',
        path,
        `a ${spec.kind} needs YAML front matter between --- lines with ${required.join(' and ')}`,
      );
    }
    data = split.kind === 'present' ? split.data : {};
    body = split.body;
    where = 'front matter';
  } else {
    const parsed = parseYaml(text);
    if (!parsed.ok) return problem('malformed_yaml', path, `not valid YAML: ${parsed.message}`);
    if (parsed.value !== null && parsed.value !== undefined && !isMapping(parsed.value)) {
      return problem('schema_violation', path, `a ${spec.kind} must be a YAML mapping`);
    }
    data = parsed.value ?? {};
    body = '';
    where = 'the YAML document';
  }

  const checked = checkMetadata(spec, data, where);
  if (!checked.ok) {
    return {
      diagnostics: checked.problems.map(({ code, message }) => ({ severity: 'error', code, path, message })),
    };
  }
  const metadata = checked.metadata;
  const identity = spec.identity(pathIdentity, metadata);
  return {
    object: {
      uri: objectUri(spec.kind, identity),
      id: objectId(spec.kind, identity),
      kind: spec.kind,
      identity,
      title: spec.title(identity, metadata, body),
      description: spec.description(metadata, body),
      metadata,
      provenance: { path, size: bytes.length },
      media_type: spec.mediaType,
      content: text,
      tags: sortedTags(metadata),
    },
  };
}

/**
 * Builds the index of `root` (holding `manifest`) without searching for the root. With `cache`
 * (kept by a serving process from one build to the next) every file is still read, but only a
 * file whose bytes changed is parsed and validated again; everything across files (duplicate
 * identities, the order) is computed over the whole set each time, so the result is the same.
 */
export async function buildIndex(root: string, manifest: Manifest, discovery: DiscoveryMode, cache?: ParsedFiles): Promise<LayerIndex> {
  const realRoot = await realpath(root);
  const directories = new RealDirectories(realRoot);
  const found = await discover({ root: realRoot, repoPath: manifest.repoPath, localPath: manifest.localPath, mode: discovery, directories });
  const enabled = new Set(manifest.sections);
  const prefixLength = manifest.repoPath.length + 1;

  const candidates: Array<{ path: string; spec: KindSpec; pathIdentity: string }> = [];
  const containers: string[] = [];
  for (const path of found.paths) {
    const relative = path.slice(prefixLength);
    const match = matchKind(relative, enabled);
    if (match !== undefined) candidates.push({ path, ...match });
    else if (mayHoldKind(relative, enabled)) containers.push(path);
  }

  cache?.begin();
  let read = 0;
  const outcomes = await mapLimit(candidates, READ_CONCURRENCY, async (candidate) => {
    // Files are read synchronously; let the thread's event loop run between batches (the start-up
    // build runs in the main thread, a take-over's in a bridge that is still relaying).
    if (++read % READS_PER_TURN === 0) await setImmediate();
    return indexFile(realRoot, candidate.path, candidate.spec, candidate.pathIdentity, directories, cache);
  });
  cache?.finish();
  const linked = await mapLimit(containers, READ_CONCURRENCY, (path) => linkedContainer(realRoot, path));

  const diagnostics: Diagnostic[] = [...found.diagnostics];
  for (const diagnostic of linked) if (diagnostic !== undefined) diagnostics.push(diagnostic);
  for (const entry of found.undecodable) {
    const diagnostic = undecodableName(entry, entry.path.slice(prefixLength), enabled);
    if (diagnostic !== undefined) diagnostics.push(diagnostic);
  }
  const byUri = new Map<string, LayerObject[]>();
  for (const outcome of outcomes) {
    if ('diagnostics' in outcome) {
      diagnostics.push(...outcome.diagnostics);
      continue;
    }
    const claimants = byUri.get(outcome.object.uri);
    if (claimants === undefined) byUri.set(outcome.object.uri, [outcome.object]);
    else claimants.push(outcome.object);
  }

  const objects: LayerObject[] = [];
  for (const [uri, claimants] of byUri) {
    const [only] = claimants;
    if (claimants.length === 1 && only !== undefined) {
      objects.push(only);
      continue;
    }
    // Neither claimant wins: serving one would depend on discovery order.
    for (const claimant of claimants) {
      const others = claimants.filter((other) => other !== claimant).map((other) => other.provenance.path);
      diagnostics.push({
        severity: 'error',
        code: 'duplicate_identity',
        path: claimant.provenance.path,
        message: `claims ${uri}, also claimed by ${others.join(', ')}; every claimant is left out`,
      });
    }
  }

  objects.sort((a, b) => compare(a.uri, b.uri));
  diagnostics.sort((a, b) => compare(a.path, b.path) || compare(a.code, b.code) || compare(a.message, b.message));
  const state = diagnostics.some((diagnostic) => diagnostic.severity === 'error') ? 'degraded' : 'ok';
  log.debug(`layer: ${objects.length} objects, ${diagnostics.length} diagnostics (${discovery} discovery)`);
  return {
    repository_id: repositoryId(realRoot),
    root: realRoot,
    localPath: manifest.localPath,
    discovery,
    state,
    objects,
    diagnostics,
    sections: [...manifest.sections],
  };
}
