import type { Store } from '../store/index.js';

/**
 * What an adapter remembers of the deliveries it took, so a replayed or redelivered one is handled
 * once: a webhook's signature, Telegram's `update_id`, Slack's `event_id`, WhatsApp's message id,
 * Feishu's `event_id`. `sage serve` keeps them in the store (`storeSeenIds`), so a restarted server
 * and every server over one Postgres database agree; an adapter built without one (unit tests)
 * remembers in its own memory (`memorySeenIds`).
 */
export interface SeenIds {
  /**
   * True the first time `id` is seen, recording it until `expiresAt` (epoch ms); false while an
   * earlier record is live (a replay or redelivery: drop it). Checked before the delivery reaches
   * the core, so a refused one changes nothing.
   */
  firstSight(id: string, expiresAt: number): Promise<boolean>;
  /** Forgets `id` after its handling failed, so the platform's redelivery is taken. */
  forget(id: string): Promise<void>;
}

/** The time an adapter checks signing timestamps and expiries against (the server's clock; a fake one in tests). */
export interface ChannelClock {
  now(): number;
}

export const systemChannelClock: ChannelClock = { now: () => Date.now() };

/** How often expired ids are deleted from the store, at most (a delete runs on a delivery after this much time). */
const PRUNE_EVERY_MS = 10 * 60_000;

/** Seen ids of one channel in the store's `channel_seen_ids`, pruned now and then as deliveries come. */
export function storeSeenIds(store: Pick<Store, 'markChannelIdSeen' | 'forgetChannelId' | 'pruneChannelSeenIds'>, channel: string, clock: ChannelClock, onPruneError?: (error: unknown) => void): SeenIds {
  let nextPrune = clock.now() + PRUNE_EVERY_MS;
  return {
    async firstSight(id, expiresAt) {
      const now = clock.now();
      if (now >= nextPrune) {
        nextPrune = now + PRUNE_EVERY_MS;
        // Housekeeping only: a failure leaves rows that the next prune (or the expiry check) handles.
        void store.pruneChannelSeenIds(now).catch((error: unknown) => onPruneError?.(error));
      }
      return store.markChannelIdSeen(channel, id, expiresAt, now);
    },
    forget: (id) => store.forgetChannelId(channel, id),
  };
}

/** Seen ids in this process only, bounded (the oldest go first past `limit`). */
export function memorySeenIds(clock: ChannelClock, limit = 10_000): SeenIds {
  const expiries = new Map<string, number>();
  return {
    async firstSight(id, expiresAt) {
      const now = clock.now();
      const live = expiries.get(id);
      if (live !== undefined && live > now) return false;
      expiries.delete(id);
      expiries.set(id, expiresAt);
      if (expiries.size > limit) expiries.delete(expiries.keys().next().value!);
      return true;
    },
    async forget(id) {
      expiries.delete(id);
    },
  };
}
