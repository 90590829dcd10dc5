import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlStore } from '../sql-store.js';
import type { ContractBackend } from './contract-backends.js';

let channels = 0;
/** A channel id of its own per test, so tests sharing a database do not see each other's ids. */
const newChannel = () => `webhook:seen_${Date.now().toString(36)}_${++channels}`;
const T0 = 1_700_000_000_000;

/**
 * The seen-id part of the Store contract (channels: replays and redeliveries), on each backend:
 * first sight wins once, per channel; a live record refuses the id, an expired one gives it back;
 * two connections racing on one id get one true between them; a reopened store still knows it.
 */
export function describeChannelSeenIdsContract(backend: ContractBackend): void {
  describe(`Store channel seen ids: ${backend.name}`, () => {
    let store: SqlStore;
    let other: SqlStore;
    beforeAll(async () => {
      store = await backend.openFresh();
      other = await backend.openSame();
    });
    afterAll(async () => {
      await other?.close();
      await store?.close();
      await backend.cleanup();
    });

    it('takes an id once while it is live, per channel: the same id on another channel is its own', async () => {
      const a = newChannel();
      const b = newChannel();
      expect(await store.markChannelIdSeen(a, 'sig-1', T0 + 300_000, T0)).toBe(true);
      expect(await store.markChannelIdSeen(a, 'sig-1', T0 + 600_000, T0 + 1_000)).toBe(false);
      expect(await other.markChannelIdSeen(a, 'sig-1', T0 + 600_000, T0 + 299_999)).toBe(false);
      expect(await store.markChannelIdSeen(b, 'sig-1', T0 + 300_000, T0)).toBe(true);
      expect(await store.markChannelIdSeen(a, 'sig-2', T0 + 300_000, T0)).toBe(true);
    });

    it('an expired record gives the id back (and keeps the new expiry); a refusal does not extend the old one', async () => {
      const c = newChannel();
      expect(await store.markChannelIdSeen(c, '42', T0 + 1_000, T0)).toBe(true);
      // Refused at T0 + 500: the record still ends at T0 + 1000, not at the refused call's expiry.
      expect(await store.markChannelIdSeen(c, '42', T0 + 9_000, T0 + 500)).toBe(false);
      expect(await store.markChannelIdSeen(c, '42', T0 + 5_000, T0 + 1_000)).toBe(true);
      expect(await store.markChannelIdSeen(c, '42', T0 + 9_000, T0 + 4_999)).toBe(false);
      expect(await store.markChannelIdSeen(c, '42', T0 + 9_000, T0 + 5_000)).toBe(true);
    });

    it('of many connections racing on one id, exactly one takes it', async () => {
      const d = newChannel();
      for (let round = 0; round < 5; round++) {
        const results = await Promise.all([store, other, store, other].map((s) => s.markChannelIdSeen(d, `race-${round}`, T0 + 60_000, T0)));
        expect(results.filter(Boolean)).toHaveLength(1);
      }
    });

    it('forgetting an id lets it be taken again; pruning removes only expired ids', async () => {
      const e = newChannel();
      expect(await store.markChannelIdSeen(e, 'failed', T0 + 60_000, T0)).toBe(true);
      await store.forgetChannelId(e, 'failed');
      expect(await other.markChannelIdSeen(e, 'failed', T0 + 60_000, T0)).toBe(true);
      expect(await store.markChannelIdSeen(e, 'short', T0 + 10, T0)).toBe(true);
      expect(await store.pruneChannelSeenIds(T0 + 10)).toBeGreaterThanOrEqual(1);
      // 'short' is gone (taken again even at a time it would still have been live), 'failed' is kept.
      expect(await store.markChannelIdSeen(e, 'short', T0 + 60_000, T0)).toBe(true);
      expect(await store.markChannelIdSeen(e, 'failed', T0 + 60_000, T0 + 20)).toBe(false);
    });

    it('a reopened store (a restarted server) still refuses what it saw', async () => {
      const f = newChannel();
      expect(await store.markChannelIdSeen(f, 'Ev123', T0 + 60_000, T0)).toBe(true);
      const reopened = await backend.openSame();
      try {
        expect(await reopened.markChannelIdSeen(f, 'Ev123', T0 + 60_000, T0 + 30_000)).toBe(false);
      } finally {
        await reopened.close();
      }
    });
  });
}
