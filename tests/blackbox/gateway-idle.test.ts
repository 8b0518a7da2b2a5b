/**
 * A provider that stalls in the middle of a stream — black-box, one `serve --port 0`, a scripted
 * provider that sends one chunk and then nothing. Covers:
 * - past `idle_timeout_seconds` without a chunk, the client's stream ends with an SSE error event
 *   `upstream_idle` naming the provider and the timeout, then ends (not cut), within ~3 s;
 * - the upstream request is aborted, the provider's only slot is free again (a following request
 *   is served, with `max_queue: 0` a held slot would be 503 `busy`), and usage counts the failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { jsonOf, MESSAGES, startGatewayScene, type GatewayScene } from './gateway-fixture.js';

let scene: GatewayScene;

beforeAll(async () => {
  scene = await startGatewayScene();
});
afterAll(async () => {
  await scene?.close();
});

/** Reads a streamed answer to its end; `cut` when the connection broke instead. */
async function readStream(response: Response): Promise<{ text: string; cut: boolean }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  for (;;) {
    try {
      const { done, value } = await reader.read();
      if (done) return { text, cut: false };
      text += Buffer.from(value).toString('utf8');
    } catch {
      return { text, cut: true };
    }
  }
}

describe('a provider that stalls mid-stream', () => {
  it('ends the stream with an upstream_idle error event after idle_timeout_seconds, frees the slot and counts the failure', async () => {
    const api = await scene.modelApi({ replies: [{ kind: 'stall', text: 'the first words' }, { kind: 'text', text: 'served after the stall' }] });
    await scene.writeConfig(
      [
        'providers:',
        `  idler: {base_url: ${api.url}/v1, models: [m1], idle_timeout_seconds: 1, max_concurrent: 1, max_queue: 0}`,
        'routing:',
        '  priority_models: [{model: m1}]',
        '',
      ].join('\n'),
    );
    const started = Date.now();
    const response = await scene.chat({ messages: MESSAGES, stream: true });
    expect(response.status).toBe(200);
    const { text, cut } = await readStream(response);
    const elapsed = Date.now() - started;
    expect(cut).toBe(false);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(3_000);
    expect(text).toContain('"content":"the "');
    expect(text).not.toContain('[DONE]');
    // The last event is the gateway's: our error shape, naming the provider and the timeout.
    const events = text.split('\n\n').filter((event) => event !== '');
    const last = events.at(-1) as string;
    expect(text.endsWith('\n\n')).toBe(true);
    expect(last.startsWith('data: ')).toBe(true);
    const error = JSON.parse(last.slice('data: '.length)).error;
    expect(error).toMatchObject({ code: 'upstream_idle', type: 'server_error' });
    expect(error.message).toContain('idler/m1');
    expect(error.message).toContain('1 s');
    expect(error.message).toContain('idle_timeout_seconds');

    // The upstream request was aborted: the provider saw its client go.
    await waitFor(() => api.inFlight === 0, { what: 'the stalled upstream request to be aborted', timeoutMs: 5_000 });
    // The only slot is free: with no queue, a held slot would answer 503 busy.
    const next = await scene.chat({ messages: MESSAGES });
    expect(next.status).toBe(200);
    expect((await jsonOf(next)).choices[0].message.content).toBe('served after the stall');

    const usage = await jsonOf(await scene.get('/api/v1/usage'));
    expect(usage.providers.idler).toMatchObject({ requests: 2, failed: 1 });
    expect(scene.server.stderr()).toMatch(/gateway: idler\/m1: no chunk for 1 s/);
  });
});
