/**
 * The tool set: the seven tools with their JSON Schemas, read-only mode without the tools that
 * change things, ask's question for the loop, and the root the tools were made for.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTools, probeMasking, protectedRedactor } from '../../../src/executor/tools/index.js';
import { createToolbox } from './toolbox.js';
import type { Toolbox } from './toolbox.js';

let box: Toolbox;

beforeEach(async () => {
  box = await createToolbox({ files: { 'a.txt': 'a\n' } });
});

afterEach(async () => {
  await box.cleanup();
});

describe('createTools', () => {
  it('makes the seven tools, each with a description and an object JSON Schema', () => {
    const tools = createTools({ root: box.root, deny: [] });
    expect(tools.map((tool) => tool.name)).toEqual(['read_file', 'write_file', 'edit_file', 'glob', 'grep', 'bash', 'ask']);
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.parameters).toMatchObject({ type: 'object', properties: expect.any(Object) });
      expect(tool.parameters).not.toHaveProperty('$schema');
    }
    const read = tools[0]?.parameters as { required: string[]; properties: Record<string, unknown> };
    expect(read.required).toEqual(['path']);
    expect(Object.keys(read.properties)).toEqual(['path', 'offset', 'limit']);
  });

  it('leaves write_file, edit_file and bash out in read-only mode', () => {
    expect(createTools({ root: box.root, deny: [], mode: 'read-only' }).map((tool) => tool.name)).toEqual(['read_file', 'glob', 'grep', 'ask']);
  });

  it('refuses options that are not a root and a list of globs', () => {
    expect(() => createTools({ root: '', deny: [] })).toThrow();
    expect(() => createTools({ root: box.root, deny: [''] })).toThrow();
    expect(() => createTools({ root: `${box.root}/missing`, deny: [] })).toThrow(/ENOENT/);
  });

  it('throws when run with a context for another root (a bug in the caller, not the model)', async () => {
    await expect(box.run('read_file', { path: 'a.txt' }, { root: '/tmp' })).rejects.toThrow(`executor tools made for ${box.root} were run with root /tmp`);
  });
});

describe('for the loop', () => {
  it('redacts text that did not come from a tool with the values of the protected files as they are now', async () => {
    await writeFile(join(box.root, 'secrets.yaml'), 'db_password: correct-horse-battery\n');
    const redact = await protectedRedactor({ root: box.root, deny: [] });
    expect(redact('the password is correct-horse-battery')).toBe('the password is [redacted: protected content]');
  });

  it('says whether bash can run here, once per process', async () => {
    const first = probeMasking();
    expect(probeMasking()).toBe(first);
    expect(await first).toEqual({ available: true });
  });
});

describe('ask', () => {
  it('returns the question and its options for the loop, and does nothing else', async () => {
    expect(await box.run('ask', { question: 'Which database?', options: ['postgres', 'sqlite'] })).toEqual({
      ok: true,
      output: 'The question was asked; the turn ends until it is answered.',
      ask: { question: 'Which database?', options: ['postgres', 'sqlite'] },
    });
    expect((await box.run('ask', { question: 'Go on?' })).ask).toEqual({ question: 'Go on?', options: [] });
  });

  it('answers a question that is empty with what is wrong', async () => {
    expect((await box.run('ask', { question: '  ' })).output).toMatch(/^invalid input for ask: question: Too small/);
  });
});
