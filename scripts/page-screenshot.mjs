#!/usr/bin/env node
/**
 * Writes docs/page.png: the live page over a realistic scene. In a temporary git repository it
 * starts three agents' MCP clients (the first becomes the shared server, the others bridge), has
 * them announce and claim (two claims overlap), exchanges messages with the overseer, runs two
 * harness sessions of the fake agent CLI (one finished, one still printing) and one executor task,
 * then photographs the page in Debian's chromium. Everything it started is stopped and the
 * repository removed, whatever happens.
 *
 *   npm run build && node scripts/page-screenshot.mjs [out.png]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chromium } from 'playwright-core';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'dist/src/cli/main.js');
const FAKE_AGENT = join(ROOT, 'tests/fixtures/harness/fake-agent.mjs');
const OUT = resolve(process.argv[2] ?? join(ROOT, 'docs/page.png'));

const FILES = {
  '.ai/manifest.yaml': 'schema: ai-repository/v1\nrepo: {path: .ai/repo}\nlocal: {path: .ai/local}\n',
  '.ai/repo/rules/code/small-modules.md': '---\ntitle: Prefer small modules\n---\n# Prefer small modules\n\nOne concept per file.\n',
  '.ai/repo/rules/testing.md': '# Test behaviour, not code\n',
  '.ai/repo/knowledge/architecture/threads.md': '# Threads\n\nThe HTTP projection runs in its own worker thread.\n',
  '.ai/repo/profiles/reviewer.yaml': JSON.stringify({ id: 'reviewer', agent: 'claude', command: FAKE_AGENT, env: { FAKE_AGENT_VENDOR: 'claude' }, harness: { enabled: true } }),
  '.ai/repo/profiles/executor.yaml': JSON.stringify({ id: 'executor', agent: 'executor', command: FAKE_AGENT, env: { FAKE_AGENT_VENDOR: 'executor' }, harness: { enabled: true } }),
  '.gitignore': '.ai/local/\n',
  'src/billing/invoice.ts': 'export const total = 0;\n',
  'src/billing/tax.ts': 'export const rate = 0.21;\n',
  'docs/billing.md': '# Billing\n',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cleanups = [];

async function agent(dir, name) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--http-port', '0'], cwd: dir, stderr: 'ignore', env: { ...process.env, MAJORDOMUS_LOG: 'error' } });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

async function tool(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  if (result.isError) throw new Error(`${name}: ${result.content?.[0]?.text}`);
  return result.structuredContent;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'majordomus-page-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const git = (...args) => execFileSync('git', ['-c', 'user.name=demo', '-c', 'user.email=demo@example.com', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'demo');

  const claude = await agent(dir, 'claude-code');
  const codex = await agent(dir, 'codex');
  const gemini = await agent(dir, 'gemini-cli');
  const lease = JSON.parse(readFileSync(join(dir, '.ai/local/state/mcp/server.json'), 'utf8'));

  await tool(claude, 'majordomus_announce', { intent: 'Splitting invoice.ts into line items and totals', paths: ['src/billing/invoice.ts'] });
  await tool(codex, 'majordomus_announce', { intent: 'Moving the tax rules into their own module', paths: ['src/billing/'] });
  await tool(gemini, 'majordomus_announce', { intent: 'Documenting the billing flow', paths: ['docs/billing.md'] });
  await tool(claude, 'majordomus_claim', { paths: ['src/billing/invoice.ts'], intent: 'split into line items and totals' });
  await tool(codex, 'majordomus_claim', { paths: ['src/billing/**'], intent: 'move tax rules out', proceed: true });
  await tool(gemini, 'majordomus_claim', { paths: ['docs/billing.md'], intent: 'write the billing flow', exclusive: false });
  const peers = await tool(gemini, 'majordomus_peers', {});
  const [p1, p2] = peers.peers.map((p) => p.id);
  await tool(codex, 'majordomus_send_message', { to: [p1], subject: 'invoice.ts', body: 'I need to touch invoice.ts for the tax import. Can you land your split first?' });
  await tool(claude, 'majordomus_send_message', { to: [p2], thread: 'm1', body: 'Yes: about ten minutes, I will release the claim when it is merged.' });
  await tool(gemini, 'majordomus_send_message', { to: ['overseer'], body: 'Billing docs drafted; should I include the tax examples?' });
  await fetch(`${lease.url}/api/v1/messages`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${lease.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ to: ['all'], subject: 'Release', body: 'Release branch is cut at 16:00; keep claims short until then.' }),
  });

  await tool(claude, 'majordomus_spawn', { profile: 'reviewer', prompt: 'answer:Reviewed the billing split: two naming nits, otherwise fine.', wait: true, timeout_seconds: 60 });
  await tool(codex, 'run_task', { task: 'answer:Moved the tax rules to src/billing/tax-rules.ts; tests pass.', wait: true, timeout_seconds: 60 });
  await tool(claude, 'majordomus_spawn', { profile: 'reviewer', prompt: 'lines:600:250 answer:done' });

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const address = execFileSync(process.execPath, [MAIN, 'open', '--print'], { cwd: dir, encoding: 'utf8' }).trim();
  await page.goto(address, { waitUntil: 'load' });
  await page.locator('#connection.live').waitFor({ timeout: 30_000 });
  await page.locator('#session-list .status-running').waitFor({ timeout: 30_000 });
  await sleep(2_500); // a few ticks in the running session's tail
  await page.screenshot({ path: OUT, fullPage: true });
  process.stdout.write(`wrote ${OUT}\n`);
}

try {
  await main();
} finally {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // best effort: the rest still runs
    }
  }
}
