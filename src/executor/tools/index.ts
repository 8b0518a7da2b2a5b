/**
 * TEMPORARY: the smallest tool set the loop needs (read_file, write_file, ask), standing in for the
 * full set (src/executor/tools/, written separately) until the two branches merge. Same signature.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import type { ExecutorTool, ToolContext, ToolOutcome } from '../tool.js';

export interface CreateToolsOptions {
  root: string;
  deny: readonly string[];
  mode?: 'default' | 'read-only';
}

function record(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** The absolute path of `path` under the root, or null when it leaves the root. */
function inside(path: string, context: ToolContext): string | null {
  const absolute = resolve(context.cwd, path);
  const rel = relative(context.root, absolute);
  return rel.startsWith('..') || isAbsolute(rel) ? null : absolute;
}

function failure(output: string): ToolOutcome {
  return { ok: false, output };
}

export function createTools(options: CreateToolsOptions): ExecutorTool[] {
  const readFileTool: ExecutorTool = {
    name: 'read_file',
    description: 'Read a text file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    async run(input, context) {
      const path = record(input).path;
      if (typeof path !== 'string') return failure('path must be a string');
      const absolute = inside(path, context);
      if (absolute === null) return failure(`${path} is outside the repository`);
      try {
        const text = await readFile(absolute, 'utf8');
        context.readFiles.add(absolute);
        return { ok: true, output: text };
      } catch (error) {
        return failure(`cannot read ${path}: ${(error as Error).message}`);
      }
    },
  };
  const writeFileTool: ExecutorTool = {
    name: 'write_file',
    description: 'Write a text file, replacing it.',
    parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    async run(input, context) {
      const { path, content } = record(input);
      if (typeof path !== 'string' || typeof content !== 'string') return failure('path and content must be strings');
      if (options.mode === 'read-only') return failure('this session is read-only');
      const absolute = inside(path, context);
      if (absolute === null) return failure(`${path} is outside the repository`);
      try {
        await writeFile(absolute, content);
        return { ok: true, output: `wrote ${content.length} characters to ${path}` };
      } catch (error) {
        return failure(`cannot write ${path}: ${(error as Error).message}`);
      }
    },
  };
  const askTool: ExecutorTool = {
    name: 'ask',
    description: 'Ask the orchestrator a question when blocked; the task pauses until it answers.',
    parameters: { type: 'object', properties: { question: { type: 'string' }, options: { type: 'array', items: { type: 'string' } } }, required: ['question'] },
    async run(input) {
      const { question, options: choices } = record(input);
      if (typeof question !== 'string' || question.trim() === '') return failure('question must be a non-empty string');
      const list = Array.isArray(choices) ? choices.filter((c): c is string => typeof c === 'string') : [];
      return { ok: true, output: 'waiting for the answer', ask: { question, options: list } };
    },
  };
  return [readFileTool, writeFileTool, askTool];
}
