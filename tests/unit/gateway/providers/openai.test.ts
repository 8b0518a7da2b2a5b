/**
 * The OpenAI-compatible provider kind, alone: the request it builds for one attempt (path, headers,
 * the model, the chain's reasoning effort, usage asked for in a stream); how it judges an answer's
 * head (429 with its Retry-After and 5xx fail over, the rest is forwarded); a max_tokens above the
 * provider's max_output_tokens lowered to it; the message it quotes
 * from an error body; the tokens of a whole answer; and, fed through the one SSE parser, the usage
 * chunk of a stream however the reads cut it and an error chunk inside it.
 */
import { describe, expect, it } from 'vitest';
import { openaiProvider } from '../../../../src/gateway/providers/openai.js';
import { SseParser } from '../../../../src/platform/sse.js';

const target = { baseUrl: 'http://127.0.0.1:11434/v1', apiKey: null, maxOutputTokens: null };

describe('the OpenAI-compatible provider kind', () => {
  it('posts the client body to <base_url>/chat/completions with its own model name, the effort and usage asked for', () => {
    const body = { model: 'client-name', messages: [], stream: true, stream_options: { include_usage: false, other: 1 }, temperature: 0.2 };
    const request = openaiProvider.request({ ...target, apiKey: 'sk-1' }, { body, stream: true, model: 'm1', reasoningEffort: 'low' });
    expect(request.url.href).toBe('http://127.0.0.1:11434/v1/chat/completions');
    expect(request.headers).toEqual({ 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer sk-1' });
    expect(JSON.parse(Buffer.from(request.body).toString('utf8'))).toEqual({
      model: 'm1',
      messages: [],
      stream: true,
      stream_options: { include_usage: true, other: 1 },
      temperature: 0.2,
      reasoning_effort: 'low',
    });
    expect(body.model).toBe('client-name'); // the client's body is left as it was

    const whole = openaiProvider.request(target, { body: { messages: [] }, stream: false, model: 'm2', reasoningEffort: null });
    expect(whole.headers).toEqual({ 'content-type': 'application/json', accept: 'application/json' });
    expect(JSON.parse(Buffer.from(whole.body).toString('utf8'))).toEqual({ messages: [], model: 'm2' });
  });

  it('lowers a max_tokens (or max_completion_tokens) above the provider\'s max_output_tokens, and leaves a smaller one', () => {
    const sent = (body: Record<string, unknown>): unknown =>
      JSON.parse(Buffer.from(openaiProvider.request({ ...target, maxOutputTokens: 8192 }, { body, stream: false, model: 'm', reasoningEffort: null }).body).toString('utf8'));
    expect(sent({ messages: [], max_tokens: 128_000 })).toMatchObject({ max_tokens: 8192 });
    expect(sent({ messages: [], max_completion_tokens: 9000 })).toMatchObject({ max_completion_tokens: 8192 });
    expect(sent({ messages: [], max_tokens: 100 })).toMatchObject({ max_tokens: 100 });
    expect(sent({ messages: [] })).toEqual({ messages: [], model: 'm' });
  });

  it('fails over on a 429 (cooling for its Retry-After, seconds or a date) and on a 5xx, and forwards the rest', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(openaiProvider.judge(429, { 'retry-after': '30' }, now)).toEqual({ forward: false, rateLimited: true, retryAfterMs: 30_000 });
    expect(openaiProvider.judge(429, { 'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT' }, now)).toEqual({ forward: false, rateLimited: true, retryAfterMs: 5_000 });
    expect(openaiProvider.judge(429, {}, now)).toEqual({ forward: false, rateLimited: true, retryAfterMs: null });
    expect(openaiProvider.judge(503, { 'retry-after': '30' }, now)).toEqual({ forward: false, rateLimited: false, retryAfterMs: null });
    for (const status of [200, 400, 404, 422]) expect(openaiProvider.judge(status, {}, now)).toEqual({ forward: true });
  });

  it('quotes the message of an error body, or its text', () => {
    expect(openaiProvider.failureMessage('{"error":{"message":"overloaded","type":"server_error"}}')).toBe('overloaded');
    expect(openaiProvider.failureMessage('{"error":"plain"}')).toBe('plain');
    expect(openaiProvider.failureMessage('{"message":"top level"}')).toBe('top level');
    expect(openaiProvider.failureMessage('Bad Gateway')).toBe('Bad Gateway');
  });

  it('reads the tokens of a whole answer, and none of a body that is not a completion', () => {
    expect(openaiProvider.wholeUsage(Buffer.from('{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}'))).toEqual({ prompt_tokens: 7, completion_tokens: 3 });
    expect(openaiProvider.wholeUsage(Buffer.from('{"choices":[]}'))).toBeNull();
    expect(openaiProvider.wholeUsage(Buffer.from('not json'))).toBeNull();
  });

  it('finds the usage chunk of a stream however the reads cut it', () => {
    const text = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34}}\r\n\r\ndata: [DONE]\n\n';
    for (const size of [1, 7, 64, text.length]) {
      const reader = openaiProvider.streamReader();
      const parser = new SseParser((event) => reader.event(event));
      for (let at = 0; at < text.length; at += size) parser.push(Buffer.from(text.slice(at, at + size)));
      expect(reader.usage).toEqual({ prompt_tokens: 12, completion_tokens: 34 });
      expect(reader.error).toBeNull();
    }
  });

  it('reads an error chunk inside a stream, and no error from a chunk that only mentions one', () => {
    const reader = openaiProvider.streamReader();
    reader.event({ event: 'message', data: '{"choices":[{"delta":{"content":"the \\"error\\" word"}}]}', id: '' });
    expect(reader.error).toBeNull();
    reader.event({ event: 'message', data: '{"error":{"message":"context length exceeded"}}', id: '' });
    expect(reader.error).toBe('context length exceeded');
  });
});
