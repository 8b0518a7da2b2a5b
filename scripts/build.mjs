#!/usr/bin/env node
// npm run build: the bundles rolldown.config.mjs describes, put into dist/ so that a process already
// running from it keeps working, and a failed build changes nothing.
//
// A running server imports some chunks late (a bridge loads the owner's code when it takes over), by
// their content-hashed names. So the build writes into a staging folder first, then moves the new
// chunks in beside the old ones, then the entries (each a rename, so no process reads half a file),
// and removes only the files no build has written for a day. The bundled dependencies' licences go
// into dist/THIRD-PARTY-NOTICES.md, which the package ships.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import config from '../rolldown.config.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const NOTICES = 'THIRD-PARTY-NOTICES.md';
/** A file of an earlier build that no build has written since is removed after this long. */
const STALE_MS = 24 * 3600_000;

/** Every file under `dir`, relative to it, leaving out dot-entries (the launcher's lock). */
async function filesUnder(dir) {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(path)).map((inner) => join(entry.name, inner)));
    else found.push(entry.name);
  }
  return found;
}

/** The package folder a bundled module came from (`…/node_modules/@scope/name`), or null for ours. */
function packageOf(moduleId) {
  const at = moduleId.lastIndexOf(`${sep}node_modules${sep}`);
  if (at < 0) return null;
  const rest = moduleId.slice(at + '/node_modules/'.length).split(sep);
  return moduleId.slice(0, at + '/node_modules/'.length) + rest.slice(0, rest[0]?.startsWith('@') ? 2 : 1).join(sep);
}

/** Each bundled package's name, version, licence and licence text. */
async function notices(chunks) {
  const packages = [...new Set(chunks.flatMap((chunk) => chunk.moduleIds.map(packageOf)).filter(Boolean))].sort();
  const sections = [];
  for (const dir of packages) {
    const { name, version, license } = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    const licenceFile = (await readdir(dir)).find((file) => /^(licen[sc]e|copying)(\.|$)/i.test(file));
    const text = licenceFile ? (await readFile(join(dir, licenceFile), 'utf8')).trim() : `(no licence file in the package; its package.json says ${license})`;
    sections.push(`## ${name} ${version} (${license})\n\n\`\`\`\n${text}\n\`\`\``);
  }
  return `# Third-party notices\n\nThe scripts under dist/ include code of these packages (bundled by \`npm run build\`).\n\n${sections.join('\n\n')}\n`;
}

const started = performance.now();
// Beside dist/, at its depth: the source maps name the sources relative to where they are written.
const staging = join(ROOT, `.dist-staging-${process.pid}`);
await rm(staging, { recursive: true, force: true });
try {
  const outputs = await build({ ...config, output: { ...config.output, dir: staging } });
  const items = [outputs].flat().flatMap((result) => result.output);
  const chunks = items.filter((item) => item.type === 'chunk');
  await writeFile(join(staging, NOTICES), await notices(chunks));

  const written = await filesUnder(staging);
  const isChunk = (file) => file.startsWith(join('src', 'chunks') + sep);
  // Chunks first, then the entries, the executable last: whatever starts meanwhile finds what it imports.
  const order = [...written.filter(isChunk), ...written.filter((file) => !isChunk(file)).sort((a, b) => Number(a.endsWith('main.js')) - Number(b.endsWith('main.js')))];
  for (const file of order) {
    await mkdir(dirname(join(DIST, file)), { recursive: true });
    await rename(join(staging, file), join(DIST, file));
  }

  const current = new Set(written);
  let removed = 0;
  for (const file of await filesUnder(DIST)) {
    if (current.has(file)) continue;
    const path = join(DIST, file);
    if (Date.now() - (await stat(path)).mtimeMs < STALE_MS) continue;
    await rm(path, { force: true });
    removed += 1;
  }
  const bytes = chunks.reduce((sum, chunk) => sum + chunk.code.length, 0);
  const kept = (await filesUnder(DIST)).length - current.size;
  console.log(
    `build: ${chunks.length} scripts (${(bytes / 1024 / 1024).toFixed(1)} MiB) in ${relative(ROOT, DIST)}/, ${Math.round(performance.now() - started)} ms` +
      (removed + kept > 0 ? `; files of earlier builds: ${removed} removed, ${kept} kept for a day` : ''),
  );
} finally {
  if (existsSync(staging)) await rm(staging, { recursive: true, force: true });
}
