import type { Message } from '../model/types.js';

export interface HistorySplit {
  /** Leading system messages, always kept. */
  head: Message[];
  /** What may be summarised. */
  older: Message[];
  /** Kept verbatim: the most recent turns and everything from the first unresolved tool call on. */
  recent: Message[];
}

/**
 * Splits a conversation for compaction without ever separating an assistant tool call from its
 * results: the cut only falls before a user message, a system message or an assistant message,
 * never before a tool result. The recent part holds at least `keepRecent` messages, and starts no
 * later than the first assistant message with a call that has no result yet (a call waiting for
 * approval, or interrupted) so that call is kept exactly as it was.
 */
export function splitHistory(messages: readonly Message[], keepRecent: number): HistorySplit {
  let start = 0;
  while (start < messages.length && messages[start]!.role === 'system') start++;
  const head = messages.slice(0, start);

  let cut = Math.max(start, messages.length - Math.max(0, keepRecent));
  const unresolved = firstUnresolvedCall(messages, start);
  if (unresolved !== undefined) cut = Math.min(cut, unresolved);
  // A tool result belongs to the assistant message before it: move the cut back to that message.
  while (cut > start && messages[cut]?.role === 'tool') cut--;

  return { head, older: messages.slice(start, cut), recent: messages.slice(cut) };
}

/** Index of the first assistant message with a tool call that no later tool message answers. */
function firstUnresolvedCall(messages: readonly Message[], from: number): number | undefined {
  const answered = new Set<string>();
  for (const message of messages) if (message.role === 'tool') answered.add(message.toolCallId);
  for (let index = from; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant' && message.toolCalls?.some((call) => !answered.has(call.id))) return index;
  }
  return undefined;
}
