/**
 * Server-sent events as MCP's Streamable HTTP uses them: every JSON-RPC message is one `message`
 * event whose single `data` line is the message's JSON text (JSON text holds no raw newline).
 */

/** One JSON-RPC message (its JSON text) as an SSE event. */
export function sseEvent(json: string): string {
  return `event: message\ndata: ${json}\n\n`;
}

/** An SSE comment: ignored by every reader, it keeps an idle connection open and flushes the head. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`;
}

/** Whether an `Accept` header lists `text/event-stream` (with or without parameters). */
export function acceptsEventStream(accept: string): boolean {
  return /(?:^|,)\s*text\/event-stream\s*(?:;[^,]*)?(?:,|$)/i.test(accept);
}
