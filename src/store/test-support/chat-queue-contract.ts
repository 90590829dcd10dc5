import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, migrate } from '../migrations.js';
import type { SqlDriver } from '../sql/driver.js';
import type { SqlStore } from '../sql-store.js';
import type { ContractBackend } from './store-contract.js';

let sessions = 0;
const newSession = () => `webhook:chat_${Date.now()}_${++sessions}`;
const msg = (text: string, senderId = '7001') => ({ channel: 'webhook', chatId: 'c', senderId, text });
const texts = (rows: { message: Record<string, unknown> }[]) => rows.map((r) => r.message['text']);

/**
 * The chat queue's part of the Store contract (channels: messages queued for a working run), run
 * against each backend: order, the reserve/settle handover, /stop's drop, two connections at once,
 * and that what was committed is there after a reopen.
 */
export function describeChatQueueContract(backend: ContractBackend): void {
  describe(`Store chat queue: ${backend.name}`, () => {
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

    it('keeps each session\'s messages in arrival order, apart from other sessions, as they were given', async () => {
      const a = newSession();
      const b = newSession();
      const first = await store.queueChatMessage(a, { ...msg('one'), senderName: 'alice', threadId: 't1' });
      await store.queueChatMessage(b, msg('elsewhere'));
      const second = await store.queueChatMessage(a, msg('two\n\nwith 好 and "quotes"'));
      expect(second.seq).toBeGreaterThan(first.seq);
      expect(first).toMatchObject({ sessionKey: a, reservedFor: null, message: { channel: 'webhook', chatId: 'c', senderId: '7001', senderName: 'alice', threadId: 't1', text: 'one' } });
      expect(Date.parse(first.queuedAt)).not.toBeNaN();
      expect(texts(await store.listChatQueue({ sessionKey: a }))).toEqual(['one', 'two\n\nwith 好 and "quotes"']);
      expect(texts(await other.listChatQueue({ sessionKey: b }))).toEqual(['elsewhere']);
      const all = await store.listChatQueue();
      expect(all.filter((r) => r.sessionKey === a || r.sessionKey === b).map((r) => r.message['text'])).toEqual(['one', 'elsewhere', 'two\n\nwith 好 and "quotes"']);
    });

    it('a handover reserves what waits, takes it again under the same token, and ends delivered (removed) or released (back in place)', async () => {
      const s = newSession();
      for (const text of ['one', 'two']) await store.queueChatMessage(s, msg(text));
      const reserved = await store.reserveChatQueue(s, 'ask:1');
      expect(texts(reserved)).toEqual(['one', 'two']);
      expect(reserved.every((r) => r.reservedFor === 'ask:1')).toBe(true);
      // Queued during the handover: not part of it, and another token cannot take the reserved ones.
      await store.queueChatMessage(s, msg('three'));
      expect(texts(await other.reserveChatQueue(s, 'ask:2'))).toEqual(['three']);
      expect(await store.settleChatQueue('ask:2', 'released')).toBe(1);
      // Tried again under the same token (after a crash): the reserved ones and what waits now.
      expect(texts(await store.reserveChatQueue(s, 'ask:1'))).toEqual(['one', 'two', 'three']);
      expect(await store.settleChatQueue('ask:1', 'released')).toBe(3);
      expect((await store.listChatQueue({ sessionKey: s })).map((r) => [r.message['text'], r.reservedFor])).toEqual([
        ['one', null],
        ['two', null],
        ['three', null],
      ]);
      expect(texts(await store.reserveChatQueue(s, 'run:9'))).toEqual(['one', 'two', 'three']);
      await store.queueChatMessage(s, msg('four'));
      expect(await store.settleChatQueue('run:9', 'delivered')).toBe(3);
      expect(texts(await store.listChatQueue({ sessionKey: s }))).toEqual(['four']);
      // Settling a token nobody reserved changes nothing.
      expect(await store.settleChatQueue('run:9', 'delivered')).toBe(0);
      expect(await store.settleChatQueue('nobody', 'released')).toBe(0);
      expect(texts(await store.listChatQueue({ sessionKey: s }))).toEqual(['four']);
    });

    it('drop (/stop, /new) removes the waiting messages of that session only, not a handover in progress', async () => {
      const s = newSession();
      const keep = newSession();
      await store.queueChatMessage(s, msg('handed over'));
      await store.reserveChatQueue(s, 'ask:drop');
      await store.queueChatMessage(s, msg('waiting'));
      await store.queueChatMessage(keep, msg('other chat'));
      expect(await store.dropChatQueue(s)).toBe(1);
      expect((await store.listChatQueue({ sessionKey: s })).map((r) => [r.message['text'], r.reservedFor])).toEqual([['handed over', 'ask:drop']]);
      expect(texts(await store.listChatQueue({ sessionKey: keep }))).toEqual(['other chat']);
    });

    it('two connections reserving one session at once: every message goes to exactly one handover', async () => {
      for (let round = 0; round < 10; round++) {
        const s = newSession();
        const queued = [];
        for (let i = 0; i < 5; i++) queued.push((await store.queueChatMessage(s, msg(`m${i}`))).seq);
        const [a, b] = await Promise.all([store.reserveChatQueue(s, `a${round}`), other.reserveChatQueue(s, `b${round}`)]);
        expect([...a, ...b].map((r) => r.seq).sort((x, y) => x - y)).toEqual(queued);
      }
    });

    it('what was committed is there after a reopen, reservations included', async () => {
      const s = newSession();
      await store.queueChatMessage(s, msg('before the restart'));
      await store.queueChatMessage(s, msg('reserved before the restart'));
      await store.reserveChatQueue(s, 'ask:crash');
      await store.queueChatMessage(s, msg('after the reservation'));
      await store.close();
      store = await backend.openSame();
      expect((await store.listChatQueue({ sessionKey: s })).map((r) => [r.message['text'], r.reservedFor])).toEqual([
        ['before the restart', 'ask:crash'],
        ['reserved before the restart', 'ask:crash'],
        ['after the reservation', null],
      ]);
    });
  });
}

/** A v3 database (before the chat queue) opens as the latest version with an empty, working queue and its runs intact. */
export function describeUpgradeFromV3(name: string, makeV3: () => Promise<SqlDriver>, open: () => Promise<SqlStore>, cleanup: () => Promise<void>): void {
  describe(`Store migrations to v4: ${name}`, () => {
    afterAll(cleanup);
    it('adds the chat queue to a v3 database and keeps its runs', async () => {
      const v3 = await makeV3();
      expect(await migrate(v3, MIGRATIONS.slice(0, 3))).toBe(3);
      const now = Date.now();
      await v3.execute(
        `INSERT INTO runs (id, status, user_id, session_id, channel, task, options, owner, lease_expires_at, pending_interaction_id, created_at, updated_at, epoch)
         VALUES ('run_v3', 'suspended', 'alice', 'webhook:1', 'webhook', 'old task', '{}', NULL, NULL, NULL, ?, ?, 2)`,
        [now, now],
      );
      await v3.close();
      const store = await open();
      try {
        expect(await store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
        expect(await store.getRun('run_v3')).toMatchObject({ status: 'suspended', task: 'old task', epoch: 2 });
        expect(await store.listChatQueue()).toEqual([]);
        await store.queueChatMessage('webhook:1', msg('after the upgrade'));
        expect(texts(await store.listChatQueue({ sessionKey: 'webhook:1' }))).toEqual(['after the upgrade']);
      } finally {
        await store.close();
      }
    });
  });
}
