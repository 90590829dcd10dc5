import type { InboundMessage } from '../adapter.js';

/** Where a chat run's replies and asks go. */
export interface ChatTarget {
  channel: string;
  chatId: string;
  threadId?: string;
}

/** sessionKey(a) === sessionKey(b), without building the strings. */
export function sameChat(a: ChatTarget, b: ChatTarget): boolean {
  return a.chatId === b.chatId && a.channel === b.channel && (a.threadId ?? '') === (b.threadId ?? '');
}

export function sessionKey(t: ChatTarget): string {
  return `${t.channel}:${t.chatId}${t.threadId ? `:${t.threadId}` : ''}`;
}

export function targetOfMessage(m: InboundMessage): ChatTarget {
  return { channel: m.channel, chatId: m.chatId, ...(m.threadId ? { threadId: m.threadId } : {}) };
}
