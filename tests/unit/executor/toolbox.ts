/**
 * A checkout for the executor's tools: a temporary git repository with the given files, the
 * tools made for it and a context as the loop builds one.
 */
import { symlink, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createTools } from '../../../src/executor/tools/index.js';
import type { ExecutorTool, ToolContext, ToolOutcome } from '../../../src/executor/tool.js';
import { createFixtureRepo } from '../../helpers/fixture-repo.js';

export interface Toolbox {
  root: string;
  context: ToolContext;
  tools: Map<string, ExecutorTool>;
  /** Runs a tool by name with the shared context (or one with its fields replaced). */
  run(name: string, input: unknown, context?: Partial<ToolContext>): Promise<ToolOutcome>;
  cleanup(): Promise<void>;
}

export interface ToolboxOptions {
  files?: Record<string, string>;
  symlinks?: Record<string, string>;
  deny?: string[];
  mode?: 'default' | 'read-only';
  /** Commit the files (default false: a plain working tree with an empty history). */
  commit?: boolean;
}

export async function createToolbox(options: ToolboxOptions = {}): Promise<Toolbox> {
  const repo = await createFixtureRepo({ manifest: null, gitignore: false, files: options.files ?? {}, commit: options.commit ?? false });
  for (const [path, target] of Object.entries(options.symlinks ?? {})) {
    await mkdir(dirname(join(repo.root, path)), { recursive: true });
    await symlink(target, join(repo.root, path));
  }
  const tools = new Map(createTools({ root: repo.root, deny: options.deny ?? [], mode: options.mode ?? 'default' }).map((tool) => [tool.name, tool]));
  const context: ToolContext = { root: repo.root, cwd: repo.root, readFiles: new Set(), signal: new AbortController().signal };
  return {
    root: repo.root,
    context,
    tools,
    run(name, input, overrides = {}) {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      return tool.run(input, { ...context, ...overrides });
    },
    cleanup: repo.cleanup,
  };
}
