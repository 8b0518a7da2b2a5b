/**
 * A provider that stalls in the middle of a stream — black-box, one `serve --port 0` for the file
 * (tests/blackbox/gateway-fixture.ts), scripted OpenAI-compatible providers on loopback whose
 * `stalled` reply sends one chunk and then nothing while the connection stays open. Covers:
 * - `providers.<slug>.idle_timeout_seconds` bounds the gap between two chunks of a streamed
 *   answer: with 1 s and `max_concurrent: 1`, a streamed `POST /v1/chat/completions` ends within
 *   about 3 s with the first chunk, an SSE error event (`data: {"error": {...}}`) naming the idle
 *   timeout (`upstream_idle`, naming the provider and the limit), and the end of the stream (not
 *   cut, no `[DONE]`); the upstream request is aborted, the next request to the same provider is
 *   served (its slot was freed, not held until the client gives up), usage counts the failure and
 *   the log says why — and an MCP client on `/mcp` hears that warning as `notifications/message`;
 * - a positive number is accepted; a non-numeric or non-positive value is a `gateway_config` error
 *   (503) naming the field.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedReply } from '../helpers/model-api.js';
import { waitFor } from '../helpers/wait.js';
import { jsonOf, MESSAGES, startGatewayScene, type GatewayScene } from './gateway-fixture.js';

let scene: GatewayScene;
let slugs = 0;

beforeAll(async () => {
  scene = await startGatewayScene();
});
afterAll(async () => {
  await scene?.close();
});
afterEach(async () => {
  await scene.stopProviders();
});

/** A fresh slug per provider: limiters and cooling are kept per slug across config reloads. */
function slug(): string {
  slugs += 1;
  return `idle${slugs}`;
}

/** The config of one provider serving `m1`, with `extra` fields, first in the chain. */
function oneProvider(name: string, url: string, extra: string): string {
  return `providers:\n  ${name}: {base_url: ${url}/v1, models: [m1], ${extra}}\nrouting:\n  priority_models: [{model: m1}]\n`;
}

/** Reads a streamed answer to its end, or until `limitMs`; answers the text and how it ended. */
async function readStream(response: Response, limitMs: number, abort: AbortController): Promise<{ text: string; ended: 'end' | 'error' | 'limit' }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const timer = setTimeout(() => abort.abort(), limitMs);
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, ended: 'end' };
      text += Buffer.from(value).toString('utf8');
    }
  } catch {
    return { text, ended: abort.signal.aborted ? 'limit' : 'error' };
  } finally {
    clearTimeout(timer);
  }
}

/** The JSON of every `data:` event of an SSE text but `[DONE]`. */
function dataEvents(text: string): any[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => {
      try {
        return JSON.parse(line.slice('data: '.length));
      } catch {
        return { unparsable: line };
      }
    });
}

describe('a provider that stalls mid-stream', () => {
  it('ends a stream whose provider goes silent after its first chunk within the idle timeout, with an SSE error event, and frees the provider\'s slot', async () => {
    const api = await scene.modelApi({
      replies: (_request, index): ScriptedReply => (index === 0 ? { kind: 'stalled', text: 'the first words of an answer' } : { kind: 'text', text: 'served after the stall' }),
    });
    const one = slug();
    await scene.writeConfig(oneProvider(one, api.url, 'max_concurrent: 1, max_queue: 0, idle_timeout_seconds: 1'));
    // An MCP client of the server: the gateway's warning (on the HTTP thread) reaches its log.
    const mcp = new Client({ name: 'listener', version: '1.0.0' });
    const heard: unknown[] = [];
    mcp.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void heard.push(notification.params.data));
    const transport = new StreamableHTTPClientTransport(new URL(`${scene.server.url}/mcp`), { requestInit: { headers: scene.server.auth } });
    await mcp.connect(transport);

    const abort = new AbortController();
    const started = Date.now();
    const response = await scene.chat({ messages: MESSAGES, stream: true }, {}, abort.signal);
    if (response.status !== 200) expect(response.status, `the gateway answered instead of a stream: ${await response.text()}`).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const { text, ended } = await readStream(response, 8_000, abort);
    const elapsed = Date.now() - started;
    expect.soft(api.stalls, 'the provider stalled after its first chunk').toBe(1);
    expect.soft(text, 'the first chunk reached the client').toContain('"content":"the "');
    expect.soft(ended, `the stream ended by itself (after ${elapsed} ms); received:\n${text}`).toBe('end');
    expect.soft(elapsed, 'the stream ended within about 3 s').toBeLessThan(3_500);
    const errors = dataEvents(text).filter((event) => event !== null && typeof event === 'object' && 'error' in event);
    expect.soft(errors, `one SSE error event; received:\n${text}`).toHaveLength(1);
    expect.soft(String(errors[0]?.error?.message), 'the error event names the idle timeout').toMatch(/idle/i);
    // The gateway's own error shape, naming the provider and the limit; no [DONE] after a failure.
    expect.soft(errors[0]?.error).toMatchObject({ code: 'upstream_idle', type: 'server_error' });
    expect.soft(String(errors[0]?.error?.message)).toContain(`${one}/m1`);
    expect.soft(String(errors[0]?.error?.message)).toContain(`providers.${one}.idle_timeout_seconds is 1`);
    expect.soft(text).not.toContain('[DONE]');
    // The upstream request was aborted: the provider saw its client go.
    await waitFor(() => api.inFlight === 0, { what: 'the stalled upstream request to be aborted', timeoutMs: 5_000 });

    // The slot is free again: with max_concurrent 1 and no queue the next request is served.
    const next = await waitFor(
      async () => {
        const attempt = await scene.chat({ messages: MESSAGES });
        if (attempt.status === 200) return attempt;
        await attempt.text();
        return null;
      },
      { what: 'the next request to the same provider to be served', timeoutMs: 1_500, intervalMs: 100 },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message} (the stalled stream still holds the one slot; open stalls: ${api.stallsOpen})`);
    });
    expect((await jsonOf(next)).choices[0].message.content).toBe('served after the stall');
    const usage = await jsonOf(await scene.get('/api/v1/usage'));
    expect(usage.providers[one]).toMatchObject({ requests: 2, failed: 1 });
    expect(scene.server.stderr()).toMatch(new RegExp(`gateway: ${one}/m1: no chunk for 1 s`));
    await waitFor(() => heard.some((data) => String(data).startsWith(`gateway: ${one}/m1: no chunk for 1 s`)), { what: 'the MCP client to hear of the stall', timeoutMs: 5_000 });
    await transport.terminateSession().catch(() => undefined);
    await mcp.close();
  });

  it('accepts a positive idle_timeout_seconds and refuses a non-numeric or non-positive one with 503 gateway_config naming it', async () => {
    const api = await scene.modelApi({ replies: [] });
    const good = slug();
    await scene.writeConfig(oneProvider(good, api.url, 'idle_timeout_seconds: 2'));
    const accepted = await scene.get('/v1/models');
    expect.soft(accepted.status, `idle_timeout_seconds: 2 is accepted: ${await accepted.text()}`).toBe(200);

    for (const value of ['soon', '0', '-1']) {
      const name = slug();
      await scene.writeConfig(oneProvider(name, api.url, `idle_timeout_seconds: ${value}`));
      const response = await scene.get('/v1/models');
      const text = await response.text();
      expect.soft(response.status, `idle_timeout_seconds: ${value}: ${text}`).toBe(503);
      if (response.status === 503) {
        const body = JSON.parse(text) as { error: { code: string; message: string } };
        expect.soft(body.error.code).toBe('gateway_config');
        expect.soft(body.error.message, `idle_timeout_seconds: ${value}`).toContain(`providers.${name}.idle_timeout_seconds`);
      }
    }
    expect(api.requests).toEqual([]);
  });
});
