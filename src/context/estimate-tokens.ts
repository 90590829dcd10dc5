import type { Message, TokenUsage, ToolSpec } from '../model/types.js';

/**
 * Cheap token estimates: characters / 4, the usual rule of thumb for English and code with
 * BPE tokenizers. It is only used to decide when to compact, with a safety margin (the
 * threshold), so a tokenizer per provider is not worth its weight; when the provider reported
 * usage for the conversation so far, that exact figure is used instead (see `LastCallUsage`).
 */
export const CHARS_PER_TOKEN = 4;
/** Role markers and separators each message costs on the wire. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(message: Message): number {
  let chars = message.content.length;
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) chars += call.name.length + call.id.length + jsonLength(call.input);
  } else if (message.role === 'tool') {
    chars += message.toolCallId.length + message.toolName.length;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}

/**
 * What the provider reported for the last call: `usage.inputTokens` covers its prompt (system,
 * tools, `messageCount - 1` messages) and `usage.outputTokens` its reply (message `messageCount`).
 * `anchor` is the last prompt message, checked by identity so a rewritten history (compaction,
 * a resumed checkpoint) falls back to the estimate rather than trusting a stale figure.
 */
export interface LastCallUsage {
  usage: TokenUsage;
  messageCount: number;
  anchor: Message | undefined;
}

export interface ConversationEstimateOptions {
  system?: string;
  tools?: readonly ToolSpec[];
  lastCall?: LastCallUsage;
}

/** Tokens the next request would take: the reported usage when it still applies, plus estimates. */
export function estimateConversationTokens(messages: readonly Message[], options: ConversationEstimateOptions = {}): number {
  const { lastCall } = options;
  if (lastCall && lastCall.messageCount <= messages.length && messages[lastCall.messageCount - 2] === lastCall.anchor) {
    let tokens = lastCall.usage.inputTokens + lastCall.usage.outputTokens;
    for (const message of messages.slice(lastCall.messageCount)) tokens += estimateMessageTokens(message);
    return tokens;
  }
  let tokens = options.system ? estimateTextTokens(options.system) : 0;
  for (const tool of options.tools ?? []) tokens += estimateTextTokens(tool.name + tool.description) + Math.ceil(jsonLength(tool.inputSchema) / CHARS_PER_TOKEN);
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}

function jsonLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}
