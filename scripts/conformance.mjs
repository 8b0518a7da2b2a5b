#!/usr/bin/env node
/**
 * Runs the MCP conformance suite's server scenarios against `majordomus serve`, by hand (it is not
 * a devDependency: docs/DECISIONS.md, "HTTP"). In a temporary git repository with a small layer it
 * starts `serve` on port 0 and, in front of it, a proxy that adds the lease's bearer token (the
 * suite sends no Authorization header) and passes every other header through — a foreign Host or
 * Origin still reaches the server's guard, so `dns-rebinding-protection` means what it says. On
 * Node 20 the suite's one Node 22 import (`fs.globSync`, used only by its `tier-check` command)
 * is shimmed. Prints each scenario's result and a table; exits 1 when one failed.
 *
 *   npm install --prefix /tmp/mcp-conformance @modelcontextprotocol/conformance@0.1.16
 *   npm run build && node scripts/conformance.mjs /tmp/mcp-conformance [scenario…]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'dist/src/cli/main.js');
const [prefix, ...chosen] = process.argv.slice(2);
if (!prefix) {
  console.error('usage: node scripts/conformance.mjs <dir where @modelcontextprotocol/conformance is installed> [scenario…]');
  process.exit(2);
}
const SUITE = join(resolve(prefix), 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

const FILES = {
  '.ai/manifest.yaml': 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: .ai/local}\n',
  '.ai/repo/rules/testing.md': '# Test behaviour, not code\n\nNames are sentences of behaviour.\n',
  '.gitignore': '.ai/local/\n',
};

/** Node 20 lacks `fs.globSync`: the suite gets `node:fs` with a stub of it. */
function nodeShim(dir) {
  writeFileSync(join(dir, 'fs.mjs'), "export * from 'node:fs';\nexport { default } from 'node:fs';\nexport function globSync() { throw new Error('fs.globSync needs Node 22'); }\n");
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `const shim = ${JSON.stringify(pathToFileURL(join(dir, 'fs.mjs')).href)};\nexport async function resolve(specifier, context, next) {\n  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) return { url: shim, shortCircuit: true };\n  return next(specifier, context);\n}\n`,
  );
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);
  return ['--import', pathToFileURL(join(dir, 'register.mjs')).href];
}

/** Forwards to `target`, adding the token; a Host or Origin naming the proxy is made to name the server. */
function tokenProxy(target, token) {
  const server = createServer((req, res) => {
    const own = `127.0.0.1:${server.address().port}`;
    const mine = (value) => value === own || value === `localhost:${server.address().port}`;
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (mine(headers.host)) headers.host = target.host;
    if (headers.origin && mine(headers.origin.replace(/^https?:\/\//, ''))) headers.origin = target.origin;
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

function run(command, args, options) {
  return new Promise((done) => {
    const child = spawn(command, args, options);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => done({ code, out }));
  });
}

const work = mkdtempSync(join(tmpdir(), 'majordomus-conformance-'));
const repo = join(work, 'repo');
let serve;
let proxy;
try {
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  const git = (...args) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: repo });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'a small layer');
  const shim = Number(process.versions.node.split('.')[0]) < 22 ? nodeShim(work) : [];
  const scenarios =
    chosen.length > 0
      ? chosen
      : (await run(process.execPath, [...shim, SUITE, 'list'], {})).out
          .split(/Client scenarios/)[0]
          .split('\n')
          .map((line) => /^\s+- ([a-z0-9-]+)/.exec(line)?.[1])
          .filter(Boolean);

  serve = spawn(process.execPath, [MAIN, 'serve', '--port', '0'], { cwd: repo, stdio: ['pipe', 'ignore', 'pipe'] });
  let log = '';
  const url = await new Promise((done, fail) => {
    serve.stderr.on('data', (d) => {
      log += d;
      const found = /serving (http:\/\/\S+)/.exec(log);
      if (found) done(found[1]);
    });
    serve.on('exit', () => fail(new Error(`serve ended:\n${log}`)));
  });
  const { token } = JSON.parse(readFileSync(join(repo, '.ai/local/state/mcp/server.json'), 'utf8'));
  proxy = await tokenProxy(new URL(url), token);
  const endpoint = `http://127.0.0.1:${proxy.address().port}/mcp`;

  const results = [];
  for (const scenario of scenarios) {
    const { code, out } = await run(process.execPath, [...shim, SUITE, 'server', '--url', endpoint, '--scenario', scenario], { cwd: work });
    process.stdout.write(`\n=== ${scenario}\n${out}`);
    const counts = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(out);
    results.push({ scenario, passed: code === 0, checks: counts ? `${counts[1]}/${counts[2]} passed, ${counts[4]} warnings` : '?' });
  }
  console.log('\nscenario | result | checks\n---|---|---');
  for (const r of results) console.log(`${r.scenario} | ${r.passed ? 'pass' : 'FAIL'} | ${r.checks}`);
  process.exitCode = results.every((r) => r.passed) ? 0 : 1;
} finally {
  proxy?.close();
  if (serve && serve.exitCode === null) {
    serve.stdin.end();
    await new Promise((done) => serve.on('exit', done));
  }
  rmSync(work, { recursive: true, force: true });
}
