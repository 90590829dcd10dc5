import type { RunRecord } from '../store/index.js';

/** A chat run's chat: where its replies and asks go. */
export interface ChatOfRun {
  channel: string;
  chatId: string;
  threadId?: string;
}

/**
 * The chat a run started from a chat channel answers to, from its stored origin; null for a run
 * of any other surface.
 */
export function chatTargetOf(run: RunRecord): ChatOfRun | null {
  const origin = run.options['origin'] as { surface?: string; channel?: string; chatId?: string; threadId?: string } | undefined;
  if (origin?.surface !== 'chat' || !origin.channel || !origin.chatId) return null;
  return { channel: origin.channel, chatId: origin.chatId, ...(origin.threadId ? { threadId: origin.threadId } : {}) };
}
