/**
 * What the gateway's black-box suites share: `serve --port 0` in a temporary repository, the
 * config written into its local half (atomically, so the server never reads half a file), and
 * chat-completions requests as an OpenAI client sends them.
 */
import { rename, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createFixtureRepo, type FixtureRepo } from '../helpers/fixture-repo.js';
import { startModelApi, type ModelApi, type ModelApiOptions } from '../helpers/model-api.js';
import { startServe, type ServeProcess } from '../helpers/serve.js';
import { LAYER_FILES } from './http-fixture.js';

export const CONFIG_RELATIVE = '.ai/local/executor.yaml';

export interface GatewayScene {
  repo: FixtureRepo;
  server: ServeProcess;
  /** Writes `.ai/local/executor.yaml` (replacing it whole). */
  writeConfig(text: string): Promise<void>;
  /** A scripted provider, stopped by `close`. */
  modelApi(options?: ModelApiOptions): Promise<ModelApi>;
  /** POST /v1/chat/completions with the token (unless `headers` overrides Authorization). */
  chat(body: unknown, headers?: Record<string, string>, signal?: AbortSignal): Promise<Response>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** Stops every provider started since the last call (between tests). */
  stopProviders(): Promise<void>;
  close(): Promise<void>;
}

export async function startGatewayScene(env: Record<string, string> = {}): Promise<GatewayScene> {
  const repo = await createFixtureRepo({ files: LAYER_FILES });
  let server: ServeProcess;
  try {
    server = await startServe({ cwd: repo.root, env });
  } catch (error) {
    await repo.cleanup();
    throw error;
  }
  let providers: Array<{ stop(): Promise<void> }> = [];
  const base = server.loopbackUrl;
  let written = 0;
  const scene: GatewayScene = {
    repo,
    server,
    async writeConfig(text) {
      const path = join(repo.root, CONFIG_RELATIVE);
      const temporary = `${path}.${written++}.tmp`;
      await writeFile(temporary, text);
      await rename(temporary, path);
    },
    async modelApi(options) {
      const api = await startModelApi(options);
      providers.push(api);
      return api;
    },
    chat(body, headers = {}, signal) {
      return fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...server.auth, 'Content-Type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    },
    get(path, headers = {}) {
      return fetch(`${base}${path}`, { headers: { ...server.auth, ...headers } });
    },
    async stopProviders() {
      const stopping = providers;
      providers = [];
      await Promise.all(stopping.map((provider) => provider.stop()));
    },
    async close() {
      await scene.stopProviders();
      try {
        await server.stop();
      } finally {
        await repo.cleanup();
      }
    },
  };
  return scene;
}

/** The route header of a gateway answer, parsed. */
export function routeOf(response: Response): { provider: string | null; model: string | null; failovers: Array<{ provider: string; model: string; reason: string }> } {
  const header = response.headers.get('x-majordomus-route');
  if (header === null) throw new Error(`no X-Majordomus-Route header on a ${response.status} answer`);
  return JSON.parse(header);
}

/** A response's JSON body, for assertions. */
export async function jsonOf(response: Response): Promise<any> {
  return response.json();
}

/** A user message, as the smallest chat-completions request carries it. */
export const MESSAGES = [{ role: 'user', content: 'say hello' }];

/**
 * A pass-through HTTP proxy in front of a provider that keeps every byte of every response it
 * relays: the proof that the gateway forwards a stream unchanged.
 */
export class RecordingProxy {
  readonly responses: Buffer[] = [];
  readonly #server: Server;
  #url = '';

  private constructor(target: string) {
    const upstream = new URL(target);
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            res.write(chunk);
          });
          answer.on('end', () => {
            this.responses.push(Buffer.concat(chunks));
            res.end();
          });
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
  }

  static async start(target: string): Promise<RecordingProxy> {
    const proxy = new RecordingProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.#url = `http://127.0.0.1:${(proxy.#server.address() as AddressInfo).port}`;
    return proxy;
  }

  get url(): string {
    return this.#url;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}
