/**
 * The generated summary of docs/PERFORMANCE.md (benches/lib/summary.mjs, written by `npm run bench`):
 * - the document holds the two markers once each, in order, so a run can write between them;
 * - writing replaces what lies between the markers and nothing else, and refuses a file without them;
 * - the block names the commit (and uncommitted changes), a quick run as such, each benchmark's
 *   load average, and escapes a `|` inside a cell.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { renderSummary, SUMMARY_BEGIN, SUMMARY_END, writeSummary, type SummaryMeta } from '../../../benches/lib/summary.mjs';

const PERFORMANCE_MD = fileURLToPath(new URL('../../../docs/PERFORMANCE.md', import.meta.url));

const meta = (overrides: Partial<SummaryMeta> = {}): SummaryMeta => ({
  commit: 'abc123def',
  dirty: false,
  date: '2026-12-01T17:00:00Z',
  node: 'v20.20.2',
  cpus: 2,
  cpuModel: 'AMD EPYC',
  quick: false,
  benches: [{ name: 'http', seconds: 120, load: { before: 1.5, after: 2.5 }, failed: false }],
  ...overrides,
});

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('the generated summary of docs/PERFORMANCE.md', () => {
  it('has its two markers once each, in order', async () => {
    const text = await readFile(PERFORMANCE_MD, 'utf8');
    expect(text.split(SUMMARY_BEGIN)).toHaveLength(2);
    expect(text.split(SUMMARY_END)).toHaveLength(2);
    expect(text.indexOf(SUMMARY_BEGIN)).toBeLessThan(text.indexOf(SUMMARY_END));
  });

  it('replaces only what lies between the markers, and refuses a file without them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'majordomus-summary-'));
    dirs.push(dir);
    const file = join(dir, 'PERFORMANCE.md');
    await writeFile(file, `# Performance\n\nbefore\n\n${SUMMARY_BEGIN}\nold figures\n${SUMMARY_END}\n\nafter, by hand\n`);
    writeSummary(file, renderSummary(meta(), [['http', 'b/a >= 0.5', 0.61, 'PASS']]));
    const written = await readFile(file, 'utf8');
    expect(written.startsWith('# Performance\n\nbefore\n\n')).toBe(true);
    expect(written.endsWith('\n\nafter, by hand\n')).toBe(true);
    expect(written).not.toContain('old figures');
    expect(written).toContain('| http | b/a >= 0.5 | 0.61 | PASS |');
    await writeFile(file, '# Performance, no markers\n');
    expect(() => writeSummary(file, renderSummary(meta(), []))).toThrow(/no summary markers/);
  });

  it('names the commit, uncommitted changes, a quick run and each benchmark\'s load, and escapes a | in a cell', () => {
    const block = renderSummary(meta({ dirty: true, quick: true }), [['coordination', 'answer B none | claims', '1 | 2', 'info']]);
    expect(block).toContain('commit `abc123def` with changes not yet committed');
    expect(block).toContain('--quick');
    expect(block).toContain('http 1.5 → 2.5');
    expect(block).toContain('| coordination | answer B none \\| claims | 1 \\| 2 | info |');
    expect(block.startsWith(SUMMARY_BEGIN)).toBe(true);
    expect(block.endsWith(SUMMARY_END)).toBe(true);
  });
});
