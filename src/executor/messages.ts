/**
 * The conversation as chat completions carry it. These are the wire shapes themselves: the
 * conversation file stores them as they were sent, so a resumed turn sends exactly what the
 * model saw before.
 */

/** One tool call of an assistant message; `arguments` is the JSON text the model wrote. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
}

/** A tool's result, answering the call `tool_call_id` of the assistant message just before. */
export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** What one request reported spending. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** True when `message` is an assistant message that calls at least one tool. */
export function callsTools(message: ChatMessage): message is AssistantMessage & { tool_calls: ToolCall[] } {
  return message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
}

/** The characters a message puts in the context (its text and its calls), for estimates. */
export function charsOf(message: ChatMessage): number {
  let chars = (message.content ?? '').length;
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  }
  return chars;
}
