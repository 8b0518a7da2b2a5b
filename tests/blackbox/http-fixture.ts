/**
 * The small layer the HTTP black-box tests serve: two rules, a knowledge document and an ADR in a
 * temporary git repository, and the means to start `serve` on it and tear both down.
 */
import { createFixtureRepo, type FixtureRepo } from '../helpers/fixture-repo.js';
import { startServe, type ServeOptions, type ServeProcess } from '../helpers/serve.js';

export const LAYER_FILES: Readonly<Record<string, string>> = {
  '.ai/repo/rules/code/small-modules.md':
    '---\ntitle: Prefer small modules\ndescription: One concept per file.\ntags: [style, layout]\n---\n# Prefer small modules\n\nOne concept per file, one public entry.\n',
  '.ai/repo/rules/testing.md': '# Test behaviour, not code\n\nNames are sentences of behaviour.\n',
  '.ai/repo/knowledge/architecture/threads.md': '# Threads\n\nThe HTTP projection runs on uWebSockets.js in its own worker thread.\n',
  '.ai/repo/adrs/0001-use-mcp.md': '# Use MCP\n\nEvery agent speaks it.\n',
  'src/index.ts': 'export const answer = 42;\n',
};

export const RULE_URI = 'majordomus://rule/code/small-modules';
export const DOCUMENT_URI = 'majordomus://document/architecture/threads';
export const OBJECT_URIS = [
  'majordomus://adr/0001-use-mcp',
  DOCUMENT_URI,
  RULE_URI,
  'majordomus://rule/testing',
];

export interface Served {
  repo: FixtureRepo;
  server: ServeProcess;
  /** Stops the server (stdin EOF) and removes the repository; safe to call twice. */
  close(): Promise<void>;
}

/** A fresh fixture repository with `serve --port 0` running in it. */
export async function serveFixture(options: Omit<ServeOptions, 'cwd'> = {}): Promise<Served> {
  const repo = await createFixtureRepo({ files: LAYER_FILES });
  let server: ServeProcess;
  try {
    server = await startServe({ ...options, cwd: repo.root });
  } catch (error) {
    await repo.cleanup();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    repo,
    server,
    close: () => {
      closing ??= (async () => {
        try {
          await server.stop();
        } finally {
          await repo.cleanup();
        }
      })();
      return closing;
    },
  };
}
