/**
 * OpenAI-compatible chat completions (OpenAI, ollama, vLLM, most hosted providers):
 * `POST <base_url>/chat/completions` with the key as a bearer token; errors as
 * `{"error": {"message"}}`; a streamed answer is SSE `data:` chunks, its tokens in the chunk
 * `stream_options.include_usage` asks for, then `data: [DONE]`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SseEvent } from '../../platform/sse.js';
import type { HeadVerdict, ProviderKind, ProviderTarget, StreamReader, Tokens, UpstreamCall, UpstreamRequest } from './provider.js';
import { parseRetryAfter } from './retry-after.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The counts of an OpenAI `usage` object; null when it is not one. */
export function tokensOf(usage: unknown): Tokens | null {
  if (!isRecord(usage)) return null;
  const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
  return { prompt_tokens: count(usage.prompt_tokens), completion_tokens: count(usage.completion_tokens) };
}

/** `{error: {message}}`, `{error: "…"}` or `{message}`; null when the value is none of them. */
function errorMessageOf(value: unknown): string | null {
  if (!isRecord(value)) return null;
  const { error } = value;
  if (typeof error === 'string') return error;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  return typeof value.message === 'string' ? value.message : null;
}

/** The usage chunk and an error chunk of a stream; every other chunk is passed by unparsed. */
class ChunkReader implements StreamReader {
  usage: Tokens | null = null;
  error: string | null = null;

  event({ data }: SseEvent): void {
    // Only a chunk naming usage or an error is parsed: most are skipped at the cost of a search.
    if (!data.includes('"usage"') && !data.includes('"error"')) return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return; // not JSON: a provider's oddity, forwarded as it is, not ours to refuse
    }
    if (!isRecord(chunk)) return;
    const tokens = tokensOf(chunk.usage);
    if (tokens) this.usage = tokens;
    if (chunk.error !== undefined && chunk.error !== null) this.error = errorMessageOf(chunk) ?? JSON.stringify(chunk.error);
  }
}

export const openaiProvider: ProviderKind = {
  name: 'openai',

  request(target: ProviderTarget, call: UpstreamCall): UpstreamRequest {
    const body: Record<string, unknown> = { ...call.body, model: call.model };
    if (call.reasoningEffort !== null) body.reasoning_effort = call.reasoningEffort;
    // Claude Code asks for up to 128k output tokens; many providers refuse more than their own limit.
    const cap = target.maxOutputTokens;
    if (cap !== null) {
      for (const field of ['max_tokens', 'max_completion_tokens']) {
        const asked = body[field];
        if (typeof asked === 'number' && asked > cap) body[field] = cap;
      }
    }
    // Asked for whatever the client said: the gateway counts every stream's tokens.
    if (call.stream) body.stream_options = { ...(isRecord(call.body.stream_options) ? call.body.stream_options : {}), include_usage: true };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
    };
    if (target.apiKey !== null) headers.authorization = `Bearer ${target.apiKey}`;
    return { url: new URL(`${target.baseUrl}/chat/completions`), headers, body: Buffer.from(JSON.stringify(body)) };
  },

  judge(status: number, headers: IncomingHttpHeaders, now: number): HeadVerdict {
    if (status === 429) return { forward: false, rateLimited: true, retryAfterMs: parseRetryAfter(headers['retry-after'], now) };
    if (status >= 500) return { forward: false, rateLimited: false, retryAfterMs: null };
    return { forward: true };
  },

  failureMessage(body: string): string {
    try {
      return errorMessageOf(JSON.parse(body)) ?? body;
    } catch {
      return body; // not JSON: quote the text
    }
  },

  wholeUsage(body: Uint8Array): Tokens | null {
    try {
      const answer = JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
      return isRecord(answer) ? tokensOf(answer.usage) : null;
    } catch {
      return null; // not JSON: forwarded as it is, counted without tokens
    }
  },

  streamReader(): StreamReader {
    return new ChunkReader();
  },
};
