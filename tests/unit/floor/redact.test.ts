/** Redaction by content: which values a protected file yields, and that no part of one survives a cut. */
import { describe, expect, it } from 'vitest';
import { KEEP_HEAD, KEEP_TAIL, CappedOutput } from '../../../src/executor/output-cap.js';
import { REDACTION_MARK, Redactor, secretValues } from '../../../src/floor/redact.js';

describe('secret values of a protected file', () => {
  it('takes long lines whole and the values of assignments, YAML and JSON pairs, quotes removed', () => {
    const values = secretValues('SECRET=abc123secretvalue\nexport TOKEN="tok-987654"\napi_key: yamlvalue42\n  "password": "hunter22",\nA=b\n\n   \nshort=12345\n');
    expect(values).toEqual(expect.arrayContaining(['SECRET=abc123secretvalue', 'abc123secretvalue', 'tok-987654', 'yamlvalue42', 'hunter22', 'short=12345']));
    // A value under 6 characters and a line under 8 are too common to redact.
    expect(values).not.toContain('12345');
    expect(values).not.toContain('A=b');
  });
});

describe('the redactor', () => {
  it('replaces every occurrence, the longest value first, and leaves other text alone', () => {
    const redactor = new Redactor(['abc123secretvalue', 'SECRET=abc123secretvalue', 'tok-987654']);
    expect(redactor.redact('x SECRET=abc123secretvalue y abc123secretvalue z tok-987654 w')).toBe(`x ${REDACTION_MARK} y ${REDACTION_MARK} z ${REDACTION_MARK} w`);
    expect(redactor.redact('nothing here')).toBe('nothing here');
  });

  it('never redacts what is not secret: the checkout path, paths above and below it, and the values named public', () => {
    const lease = secretValues('{\n  "token": "0f3c9a7e5b1d",\n  "root": "/work/repo",\n  "url": "http://127.0.0.1:8741"\n}\n');
    const redactor = new Redactor([...lease, '/work', '/work/repo/src', 'task-5d2f', 'config.yaml'], { root: '/work/repo', public: ['task-5d2f', 'config.yaml'] });
    const output = 'pwd: /work/repo\nsrc/a.ts at /work/repo/src/a.ts:3\nMAJORDOMUS_TASK_ID=task-5d2f\nread config.yaml\ntoken 0f3c9a7e5b1d';
    expect(redactor.redact(output)).toBe(`pwd: /work/repo\nsrc/a.ts at /work/repo/src/a.ts:3\nMAJORDOMUS_TASK_ID=task-5d2f\nread config.yaml\ntoken ${REDACTION_MARK}`);
  });

  it('escapes values that look like regular expressions', () => {
    const redactor = new Redactor(['a.b*c+d?(e)[f]{g}|h\\i$']);
    expect(redactor.redact('axbbbcd a.b*c+d?(e)[f]{g}|h\\i$')).toBe(`axbbbcd ${REDACTION_MARK}`);
  });

  it('with no values changes nothing', () => {
    const redactor = new Redactor([]);
    expect(redactor.size).toBe(0);
    expect(redactor.redact('abc')).toBe('abc');
    expect(redactor.redactHead('abcdef', 3)).toBe('abc');
    expect(redactor.redactTail('abcdef', 3)).toBe('def');
  });
});

describe('capped output', () => {
  const secret = 'abc123secretvalue';
  const redactor = new Redactor([secret]);

  it('keeps short output whole', () => {
    const output = new CappedOutput(redactor.longestBytes);
    output.push(Buffer.from(`hello ${secret}\n`));
    expect(output.text(redactor)).toBe(`hello ${REDACTION_MARK}\n`);
  });

  it('keeps the head and the tail of long output and says how much was cut', () => {
    const output = new CappedOutput(redactor.longestBytes);
    const lines = Array.from({ length: 20_000 }, (_, index) => `line ${index + 1}`).join('\n');
    for (let at = 0; at < lines.length; at += 1000) output.push(Buffer.from(lines.slice(at, at + 1000)));
    const text = output.text(redactor);
    expect(text.startsWith('line 1\nline 2\n')).toBe(true);
    expect(text.endsWith('line 19999\nline 20000')).toBe(true);
    const cut = /\n\[… (\d+) bytes cut …\]\n/.exec(text);
    expect(cut).not.toBeNull();
    expect(Number(cut?.[1])).toBe(Buffer.byteLength(lines) - KEEP_HEAD - KEEP_TAIL);
    expect(text.length).toBeLessThan(KEEP_HEAD + KEEP_TAIL + 100);
  });

  it('redacts a value that straddles the head cut or the tail cut, leaving no part of it', () => {
    const output = new CappedOutput(redactor.longestBytes);
    // The secret starts 5 characters before the head's cut and ends 5 after the tail's cut begins.
    output.push(Buffer.from('h'.repeat(KEEP_HEAD - 5) + secret));
    output.push(Buffer.from('m'.repeat(100_000)));
    output.push(Buffer.from(secret + 't'.repeat(KEEP_TAIL - 5)));
    const text = output.text(redactor);
    for (let length = 4; length <= secret.length; length++) {
      expect(text).not.toContain(secret.slice(0, length));
      expect(text).not.toContain(secret.slice(-length));
    }
    expect(text).toContain(`hhhhh${REDACTION_MARK}\n[…`);
    expect(text).toContain(`…]\n${REDACTION_MARK}ttttt`);
  });
});
