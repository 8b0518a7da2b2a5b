/**
 * Shared harness pieces for the benchmarks: temporary layers, the built executable as a child
 * process (with bounded waits on its log lines), a newline JSON-RPC client over real pipes, an
 * autocannon runner in a separate process, percentiles, and cleanup of everything started.
 *
 * No fixed sleeps: every wait is for a log line, an answer or an exit, each with a bound.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, cpus, availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `npm run bench -- --quick` (BENCH_QUICK=1): every benchmark shortened, so that the whole run
 * takes a couple of minutes — a developer's check that everything still runs and roughly where
 * it stands before stopping, not a measurement to quote.
 */
export function isQuick() {
  return process.env.BENCH_QUICK === '1';
}

/** A benchmark's setting: its environment variable when set, else its full or its quick default. */
export function knob(name, full, quick = full) {
  const value = process.env[name];
  return value === undefined || value === '' ? (isQuick() ? quick : full) : Number(value);
}
/** The executable under test; BENCH_MAIN_JS points at another build (an A/B variant) for diagnosis. */
export const MAIN_JS = process.env.BENCH_MAIN_JS ?? join(PACKAGE_ROOT, 'dist/src/cli/main.js');
export const RESULTS_DIR = join(PACKAGE_ROOT, 'benches/results');
export const CANNON_JS = fileURLToPath(new URL('./cannon.mjs', import.meta.url));

// ---------------------------------------------------------------------------------------------
// Cleanup: every child and temp dir registered here is removed on exit, error or signal.

const children = new Set();
const tempDirs = new Set();

export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function killAllSync() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
}

process.once('exit', killAllSync);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    killAllSync();
    process.exit(130);
  });
}

export async function makeTempDir(prefix) {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  tempDirs.add(path);
  return {
    path,
    cleanup: async () => {
      await rm(path, { recursive: true, force: true, maxRetries: 3 });
      tempDirs.delete(path);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Layers

const MANIFEST = 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: .ai/local}\n';
const WORDS = ['lease', 'bridge', 'peer', 'snapshot', 'index', 'registry', 'schema', 'thread', 'pool', 'route', 'session', 'layer', 'search', 'rule', 'skill', 'prompt', 'workflow', 'knowledge', 'latency', 'throughput'];

function sentence(seed, n) {
  const out = [];
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(WORDS[x % WORDS.length]);
  }
  return out.join(' ');
}

/** The files of a generated layer: `rules` rules and `documents` knowledge documents. */
export function layerFiles({ rules, documents }) {
  const files = { '.ai/manifest.yaml': MANIFEST, '.gitignore': '.ai/local/\n' };
  for (let i = 0; i < rules; i++) {
    const group = `g${String(i % 10).padStart(2, '0')}`;
    files[`.ai/repo/rules/${group}/rule-${i}.md`] =
      `---\ntitle: Rule ${i} about ${sentence(i, 2)}\ndescription: ${sentence(i + 7, 8)}\ntags: [${WORDS[i % WORDS.length]}, generated]\n---\n# Rule ${i}\n\n${sentence(i + 13, 60)}\n`;
  }
  for (let i = 0; i < documents; i++) {
    const group = `area-${String(i % 20).padStart(2, '0')}`;
    files[`.ai/repo/knowledge/${group}/doc-${i}.md`] =
      `---\ndescription: ${sentence(i + 3, 10)}\ntags: [${WORDS[(i * 7) % WORDS.length]}]\n---\n# Document ${i}: ${sentence(i + 5, 3)}\n\n${sentence(i + 11, 120)}\n\n## Details\n\n${sentence(i + 17, 80)}\n`;
  }
  return files;
}

const GIT_ENV = { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' };
const GIT_IDENTITY = ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'commit.gpgsign=false'];

/**
 * A temporary git repository holding a generated layer, committed (so `--discovery vcs` serves it);
 * `extra` adds files (path → content) to the same commit.
 */
export async function makeRepo({ rules = 20, documents = 30, git = true, prefix = 'majordomus-bench-', extra = {} } = {}) {
  const dir = await makeTempDir(prefix);
  const files = { ...layerFiles({ rules, documents }), ...extra };
  const made = new Set();
  for (const [path, content] of Object.entries(files)) {
    const target = join(dir.path, path);
    const parent = dirname(target);
    if (!made.has(parent)) {
      await mkdir(parent, { recursive: true });
      made.add(parent);
    }
    await writeFile(target, content);
  }
  if (git) {
    await execFileAsync('git', ['init', '-q'], { cwd: dir.path, env: GIT_ENV });
    await execFileAsync('git', ['add', '-A'], { cwd: dir.path, env: GIT_ENV });
    await execFileAsync('git', [...GIT_IDENTITY, 'commit', '-q', '--no-verify', '-m', 'bench layer'], { cwd: dir.path, env: GIT_ENV });
  }
  return { root: dir.path, files, cleanup: dir.cleanup };
}

// ---------------------------------------------------------------------------------------------
// Children

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      timer.unref?.();
    }),
  ]);
}

/**
 * Spawns a node script (the executable by default) with piped stdio. `waitStderr(re)` resolves with
 * the first match in the accumulated stderr (bounded); `stop()` ends stdin, then SIGTERM, SIGKILL.
 */
export function spawnNode(args, { cwd, env = {}, script = MAIN_JS, nodeArgs = [] } = {}) {
  const childEnv = { ...process.env, ...env };
  if (!('MAJORDOMUS_LOG' in env)) delete childEnv.MAJORDOMUS_LOG;
  const child = track(spawn(process.execPath, [...nodeArgs, script, ...args], { cwd, env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stdin.on('error', () => {});
  return {
    child,
    exited,
    stderr: () => stderr,
    waitStderr(re, ms = 30_000) {
      return withTimeout(
        new Promise((resolve, reject) => {
          const check = () => {
            const match = re.exec(stderr);
            if (match) {
              child.stderr.off('data', check);
              resolve(match);
            }
          };
          child.stderr.on('data', check);
          exited.then((s) => reject(new Error(`process exited (${s.code ?? s.signal}) before ${re}; stderr:\n${stderr}`)));
          check();
        }),
        ms,
        `${re} on stderr of ${args.join(' ')}\nstderr so far:\n${stderr}`,
      );
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.stdin.end();
      try {
        return await withTimeout(exited, graceMs, 'exit after stdin EOF');
      } catch {
        child.kill('SIGTERM');
        try {
          return await withTimeout(exited, 5_000, 'exit after SIGTERM');
        } catch {
          child.kill('SIGKILL');
          return exited;
        }
      }
    },
  };
}

export const SERVING_RE = /serving (http:\/\/127\.0\.0\.1:(\d+))/;

/**
 * A newline-delimited JSON-RPC client over a child's stdin/stdout. `onNotification(fn)` hears every
 * message without an id, with the wall-clock time (performance.timeOrigin + performance.now(), ms)
 * at which the chunk that carried it arrived.
 */
export class PipeRpc {
  #proc;
  #buffer = '';
  #pending = new Map();
  #nextId = 1;
  #listeners = new Set();

  constructor(proc) {
    this.#proc = proc;
    proc.child.stdout.setEncoding('utf8');
    proc.child.stdout.on('data', (chunk) => {
      // Taken first, before any parsing of ours, and only when someone listens.
      const receivedAt = this.#listeners.size > 0 ? performance.timeOrigin + performance.now() : 0;
      this.#buffer += chunk;
      let nl;
      while ((nl = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line.trim() === '') continue;
        const message = JSON.parse(line);
        if (message.id === undefined) {
          for (const listener of this.#listeners) listener(message, receivedAt);
          continue;
        }
        const waiter = this.#pending.get(message.id);
        if (waiter) {
          this.#pending.delete(message.id);
          waiter.resolve({ message, bytes: line.length });
        }
      }
    });
    proc.exited.then((s) => {
      for (const waiter of this.#pending.values()) waiter.reject(new Error(`the process exited (${s.code ?? s.signal}):\n${proc.stderr()}`));
      this.#pending.clear();
    });
  }

  /** Sends a request and resolves with `{message, bytes}`; rejects after `ms`. */
  request(method, params, ms = 30_000) {
    const id = this.#nextId++;
    const promise = new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#proc.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return withTimeout(promise, ms, `answer to ${method} #${id}`);
  }

  /** Calls `listener(message, receivedAt)` for every notification; returns its removal. */
  onNotification(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(method, params = {}) {
    this.#proc.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  async initialize(name = 'bench-client') {
    const { message } = await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name, version: '0.0.0' },
    });
    if (message.error) throw new Error(`initialize failed: ${JSON.stringify(message.error)}`);
    this.notify('notifications/initialized');
    return message.result;
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers (loopback only)

/** Where a checkout's lease lives (the bench layers keep the manifest's default `local.path`). */
export function leasePath(root) {
  return join(root, '.ai/local/state/mcp/server.json');
}

/**
 * The bearer token of the checkout's lease: `/mcp`, every command and every peer read need it
 * (`Authorization: Bearer <token>`). Read once the server has published its url.
 */
export async function leaseToken(root) {
  const lease = JSON.parse(await readFile(leasePath(root), 'utf8'));
  if (typeof lease.token !== 'string' || lease.token === '') throw new Error(`the lease at ${leasePath(root)} carries no token`);
  return lease.token;
}

/** The headers of an MCP POST: JSON both ways, the session once there is one, the token. */
export function mcpHeaders({ token, sessionId } = {}) {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}

/** Opens an MCP session over HTTP and sends `notifications/initialized`; resolves with its id. */
export async function mcpInitialize(base, { token, name = 'bench-http' } = {}) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: mcpHeaders({ token }),
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '0.0.0' } } }),
  });
  const sessionId = res.headers.get('mcp-session-id');
  const body = await res.text();
  if (res.status !== 200 || !sessionId) throw new Error(`initialize at ${base}/mcp answered ${res.status}: ${body}`);
  const initialized = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: mcpHeaders({ token, sessionId }),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await initialized.arrayBuffer();
  if (initialized.status >= 300) throw new Error(`notifications/initialized at ${base}/mcp answered ${initialized.status}`);
  return sessionId;
}

/** One `tools/call` over HTTP; resolves with `{message, text}` (the parsed JSON-RPC answer and its bytes). */
export async function mcpCall(base, sessionId, name, args, { token } = {}) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: mcpHeaders({ token, sessionId }),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`tools/call ${name} answered ${res.status}: ${text}`);
  // We always ask for JSON responses (the SDK reference runs with enableJsonResponse).
  return { message: JSON.parse(text), text };
}

// ---------------------------------------------------------------------------------------------
// autocannon in its own process

/**
 * Runs autocannon in a separate process. `config` is autocannon's options object (plain JSON).
 * With `untilStopped: true` the run lasts until `stop()` (stdin EOF); otherwise `config.duration`.
 * `started` resolves once the run begins; `warm` once `config.warmAfter` responses have arrived.
 * `result` resolves with a summary: req/s, latency percentiles (ms), totals, errors, non-2xx,
 * bodies checked and bad bodies (see cannon.mjs for the per-request `expect`).
 */
export function startCannon(config, { untilStopped = false } = {}) {
  // The options travel in a file: with every request's expected answer they outgrow the 128 KiB
  // a single argument may hold (spawn fails with E2BIG).
  const dir = mkdtempSync(join(tmpdir(), 'majordomus-cannon-'));
  tempDirs.add(dir);
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, JSON.stringify({ ...config, untilStopped }));
  const proc = spawnNode([configFile], { script: CANNON_JS, cwd: PACKAGE_ROOT });
  proc.exited.then(() => {
    rmSync(dir, { recursive: true, force: true });
    tempDirs.delete(dir);
  });
  let out = '';
  proc.child.stdout.setEncoding('utf8');
  proc.child.stdout.on('data', (c) => {
    out += c;
  });
  const started = proc.waitStderr(/cannon: started/, 30_000);
  const warm = config.warmAfter > 0 ? proc.waitStderr(/cannon: warm/, 60_000) : started;
  // Whoever does not await one of them must not see an unhandled rejection when the run fails.
  started.catch(() => {});
  warm.catch(() => {});
  const result = proc.exited.then((status) => {
    if (status.code !== 0) throw new Error(`autocannon runner failed (${status.code ?? status.signal}):\n${proc.stderr()}`);
    return JSON.parse(out);
  });
  return {
    started,
    warm,
    result,
    pid: proc.child.pid,
    stop: () => {
      proc.child.stdin.end();
      return result;
    },
    kill: () => proc.stop(1_000),
  };
}

export async function runCannon(config) {
  const run = startCannon(config);
  const limit = ((config.duration ?? 10) + 30) * 1000;
  return withTimeout(run.result, limit, 'autocannon run');
}

// ---------------------------------------------------------------------------------------------
// Statistics and output

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / (sorted.length || 1);
  return {
    n: sorted.length,
    mean,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    min: sorted[0],
    max: sorted[sorted.length - 1],
  };
}

export function median(values) {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export function machine() {
  const [l1, l5, l15] = loadavg();
  return {
    node: process.version,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    available_parallelism: availableParallelism(),
    loadavg: { '1m': +l1.toFixed(2), '5m': +l5.toFixed(2), '15m': +l15.toFixed(2) },
  };
}

export function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map((c) => String(c)));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function fmt(n, digits = 2) {
  if (typeof n !== 'number' || Number.isNaN(n)) return 'n/a';
  return n.toFixed(digits);
}

export async function writeResult(name, data) {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}-latest.json`);
  await writeFile(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

export function verdict(ok) {
  return ok ? 'PASS' : 'FAIL';
}

// ---------------------------------------------------------------------------------------------
// Where CPU goes: per-thread CPU time of a process from /proc (Linux), for before/after deltas.

import { readdirSync, readFileSync } from 'node:fs';

const TICKS = 100; // USER_HZ on Linux

/** Per-thread {comm, nice, cpu_s} of `pid`, keyed by tid; empty where /proc is unavailable. */
export function threadTimes(pid) {
  const out = {};
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      // fields[0] is state (field 3); utime = field 14, stime = 15, nice = 19
      const utime = Number(fields[11]);
      const stime = Number(fields[12]);
      const nice = Number(fields[16]);
      out[tid] = { comm: tid === String(pid) ? 'main thread' : comm, nice, cpu_s: (utime + stime) / TICKS };
    } catch {
      // thread ended
    }
  }
  return out;
}

/** CPU seconds per thread spent between two `threadTimes` samples, grouped by name and nice. */
export function threadDelta(before, after, wallSeconds) {
  const groups = {};
  for (const [tid, a] of Object.entries(after)) {
    const b = before[tid]?.cpu_s ?? 0;
    const key = `${a.comm} (nice ${a.nice})`;
    groups[key] ??= { threads: 0, cpu_s: 0 };
    groups[key].threads += 1;
    groups[key].cpu_s += a.cpu_s - b;
  }
  const busiest = Object.entries(after)
    .map(([tid, a]) => ({ tid: Number(tid), comm: a.comm, nice: a.nice, cores: +((a.cpu_s - (before[tid]?.cpu_s ?? 0)) / wallSeconds).toFixed(2) }))
    .filter((t) => t.cores >= 0.01)
    .sort((x, y) => y.cores - x.cores);
  Object.defineProperty(groups, 'busiest', { value: busiest, enumerable: true });
  for (const g of Object.values(groups)) {
    if (!('threads' in g)) continue;
    g.cpu_s = +g.cpu_s.toFixed(2);
    g.cores = +(g.cpu_s / wallSeconds).toFixed(2);
  }
  return groups;
}

/** Total CPU seconds of a process (all threads). */
export function processCpu(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return NaN;
  }
}

/**
 * Runs a benchmark's `main` when its file is executed directly (not imported by run.mjs); exits 1
 * when a bar misses, as `npm run bench` does.
 */
export function runWhenMain(moduleUrl, main) {
  if (process.argv[1] !== fileURLToPath(moduleUrl)) return;
  main().then(
    (result) => process.exit(result?.summaryRows?.some((r) => r[3] === 'FAIL') ? 1 : 0),
    (error) => {
      console.error(error.stack ?? error);
      process.exit(1);
    },
  );
}
