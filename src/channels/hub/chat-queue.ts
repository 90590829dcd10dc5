import type { QueuedChatMessage, Store } from '../../store/index.js';
import type { InboundMessage } from '../adapter.js';
import { sessionKey, targetOfMessage, type ChatTarget } from './chat-target.js';
import type { HubContext } from './context.js';

/** What the store keeps of a queued message: enough to hand it over and to know its chat again. */
export function storedMessage(m: InboundMessage): Record<string, unknown> {
  return {
    channel: m.channel,
    chatId: m.chatId,
    ...(m.threadId ? { threadId: m.threadId } : {}),
    senderId: m.senderId,
    ...(m.senderName ? { senderName: m.senderName } : {}),
    text: m.text,
  };
}

export function queuedMessage(q: QueuedChatMessage): InboundMessage {
  const s = q.message;
  return {
    channel: String(s['channel']),
    chatId: String(s['chatId']),
    ...(typeof s['threadId'] === 'string' ? { threadId: s['threadId'] } : {}),
    senderId: String(s['senderId']),
    ...(typeof s['senderName'] === 'string' ? { senderName: s['senderName'] } : {}),
    text: String(s['text'] ?? ''),
  };
}

/** Queued messages reach the run as one message, in order. */
export function joinTexts(messages: readonly InboundMessage[]): string {
  return messages.map((m) => m.text).join('\n\n');
}

/** Whether the ask was answered with `text` (the queued messages it was given reached the run). */
export async function answeredWith(store: Store, askId: string, text: string, prefix = false): Promise<boolean> {
  const record = await store.getInteraction(askId);
  if (record?.status !== 'answered') return false;
  const answered = (record.response as { text?: unknown } | null)?.text;
  if (typeof answered !== 'string') return false;
  // With `prefix`: the answer may have carried the message being handled after the queued ones.
  return answered === text || (prefix && answered.startsWith(`${text}\n\n`));
}

/**
 * Messages waiting in the store's chat queue for a busy chat's run. A handover is reserved for its
 * receiver (`ask:<id>` or `run:<id>`) before it is given and settled after; see the README.
 */
export class ChatQueue {
  /**
   * Chats that may have messages in the store's queue. Only this hub queues messages for its
   * channels' chats (recover, enqueue, a release), so a chat not here has none and its next-message
   * ask or new run needs no read of the queue: one read fewer per turn of every chat.
   */
  private readonly maybeQueued = new Set<string>();

  constructor(private readonly ctx: HubContext) {}

  mayHave(key: string): boolean {
    return this.maybeQueued.has(key);
  }

  /**
   * The run works: the message waits in the store for its next-message ask. Committed before the
   * chat is told, so "Queued" is a promise a restart or a crash keeps. (If the ask appeared
   * meanwhile, its notification's turn in this session comes after this one and finds the message.)
   */
  async enqueue(target: ChatTarget, m: InboundMessage): Promise<void> {
    const { store } = this.ctx.options;
    const key = sessionKey(target);
    this.maybeQueued.add(key);
    await store.queueChatMessage(key, storedMessage(m));
    const waiting = await store.listChatQueue({ sessionKey: key });
    if (waiting.length === 1) {
      await this.ctx.say(target, 'Queued: the agent reads this when it finishes what it is doing.');
    }
  }

  /**
   * Reserves what the chat has queued for `token`. A read first, and only for a chat that may have
   * something queued: most next-message asks and new runs find nothing, and then nothing is written.
   */
  async reserve(key: string, token: string): Promise<QueuedChatMessage[]> {
    const { store } = this.ctx.options;
    if (!this.maybeQueued.has(key)) return [];
    if ((await store.listChatQueue({ sessionKey: key })).length === 0) {
      this.maybeQueued.delete(key);
      return [];
    }
    // Reserved is still queued until settled: the key stays until 'delivered'.
    return store.reserveChatQueue(key, token);
  }

  async settle(key: string, token: string, outcome: 'delivered' | 'released'): Promise<void> {
    await this.ctx.options.store.settleChatQueue(token, outcome);
    // Delivered: the reservation took all the chat had (one thing at a time per chat, so nothing
    // was queued meanwhile). Released: back in the queue.
    if (outcome === 'delivered') this.maybeQueued.delete(key);
  }

  async count(key: string): Promise<number> {
    return (await this.ctx.options.store.listChatQueue({ sessionKey: key })).length;
  }

  /** `/stop`, `/new`: what waits is dropped. */
  async drop(key: string): Promise<void> {
    await this.ctx.options.store.dropChatQueue(key);
    this.maybeQueued.delete(key);
  }

  /**
   * Handovers a crash interrupted (messages still reserved): removed if they reached the run, back
   * in the queue otherwise. Returns the chats that still have messages queued.
   */
  async recover(): Promise<ChatTarget[]> {
    const { store, log } = this.ctx.options;
    // Only this hub's channels: another server over the same database may run other channels, and
    // its handovers in progress are its own.
    const all = (await store.listChatQueue()).filter((q) => this.ctx.adapters.has(String(q.message['channel'])));
    const byToken = new Map<string, QueuedChatMessage[]>();
    for (const q of all) {
      if (q.reservedFor !== null) byToken.set(q.reservedFor, [...(byToken.get(q.reservedFor) ?? []), q]);
    }
    const delivered = new Set<number>();
    for (const [token, entries] of byToken) {
      const text = joinTexts(entries.map(queuedMessage));
      const [kind, ...rest] = token.split(':');
      const id = rest.join(':');
      const reached =
        kind === 'run'
          ? (await store.getRun(id)) !== undefined
          : kind === 'ask'
            ? await answeredWith(store, id, text, true)
            : false;
      await store.settleChatQueue(token, reached ? 'delivered' : 'released');
      if (reached) for (const q of entries) delivered.add(q.seq);
      log.info({ token, messages: entries.length, reached }, 'chat queue: interrupted handover settled');
    }
    const targets = new Map<string, ChatTarget>();
    for (const q of all) {
      if (delivered.has(q.seq) || targets.has(q.sessionKey)) continue;
      this.maybeQueued.add(q.sessionKey);
      targets.set(q.sessionKey, targetOfMessage(queuedMessage(q)));
    }
    return [...targets.values()];
  }
}
