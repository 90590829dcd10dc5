import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventSeqConflictError } from './errors.js';
import { MIGRATIONS, migrate } from './migrations.js';
import { openPostgresStore, openSqliteStore } from './open-store.js';
import type { SqlDriver } from './sql/driver.js';
import { PostgresDriver } from './sql/postgres-driver.js';
import { SqliteDriver } from './sql/sqlite-driver.js';
import type { SqlStore } from './sql-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './test-support/postgres-test-db.js';

/**
 * Schema v6 keeps a write's events as one row (a batch). A v5 database's events (one row each) are
 * read back unchanged after the upgrade, new writes append after them, a seq taken in either form
 * is refused, and prune counts events, not rows.
 */
function describeEventBatches(name: string, makeV5: () => Promise<SqlDriver>, open: () => Promise<SqlStore>, cleanup: () => Promise<void>): void {
  describe(`Event batches (schema v6): ${name}`, () => {
    afterAll(cleanup);
    it('upgrades a v5 event log and keeps reading, appending and refusing by seq', async () => {
      const v5 = await makeV5();
      expect(await migrate(v5, MIGRATIONS.slice(0, 5))).toBe(5);
      const now = Date.now();
      await v5.execute(
        `INSERT INTO runs (id, status, user_id, session_id, channel, task, options, owner, lease_expires_at, created_at, updated_at, epoch)
         VALUES ('run_v5', 'running', 'alice', 's', 'cli', 'old task', '{}', 'A', ?, ?, ?, 1)`,
        [now + 60_000, now, now],
      );
      const at = new Date(now).toISOString();
      for (const [seq, type, data] of [
        [1, 'run.started', { task: 'old task' }],
        [2, 'message.delta', { text: 'hé 🙂' }],
        [3, 'step.completed', { step: 1 }],
      ] as const) {
        await v5.execute('INSERT INTO run_events (run_id, seq, type, at, data) VALUES (?, ?, ?, ?, ?)', ['run_v5', seq, type, at, JSON.stringify(data)]);
      }
      await v5.close();

      const store = await open();
      try {
        expect(await store.schemaVersion()).toBe(6);
        const old = await store.readEvents('run_v5');
        expect(old).toEqual([
          { seq: 1, runId: 'run_v5', type: 'run.started', at, data: { task: 'old task' } },
          { seq: 2, runId: 'run_v5', type: 'message.delta', at, data: { text: 'hé 🙂' } },
          { seq: 3, runId: 'run_v5', type: 'step.completed', at, data: { step: 1 } },
        ]);
        expect(await store.lastEventSeq('run_v5')).toBe(3);
        const event = (seq: number) => ({ seq, runId: 'run_v5', type: 'state.changed', at, data: { n: seq } }) as never;
        await store.write({ runId: 'run_v5', owner: 'A', epoch: 1, events: [event(4), event(5), event(6)] });
        await store.write({ runId: 'run_v5', owner: 'A', epoch: 1, events: [event(7)] });
        expect((await store.readEvents('run_v5')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        // Inside a batch, from its middle, and limits that end inside one.
        expect((await store.readEvents('run_v5', { afterSeq: 4 })).map((e) => e.seq)).toEqual([5, 6, 7]);
        expect((await store.readEvents('run_v5', { afterSeq: 2, limit: 3 })).map((e) => e.seq)).toEqual([3, 4, 5]);
        expect((await store.readEvents('run_v5', { afterSeq: 7 }))).toEqual([]);
        expect((await store.readEvents('run_v5', { afterSeq: 5 }))[0]).toEqual({ seq: 6, runId: 'run_v5', type: 'state.changed', at, data: { n: 6 } });
        expect(await store.lastEventSeq('run_v5')).toBe(7);
        // A seq already logged — in an old row, in a batch's middle, or overlapping its end — refuses the whole write.
        for (const seqs of [[3], [5], [7, 8], [8, 8]]) {
          await expect(store.write({ runId: 'run_v5', owner: 'A', epoch: 1, events: seqs.map(event) })).rejects.toBeInstanceOf(EventSeqConflictError);
        }
        expect(await store.lastEventSeq('run_v5')).toBe(7);
        await store.write({ runId: 'run_v5', owner: 'A', epoch: 1, events: [event(8)], run: { status: 'completed', release: true } });
        expect(await store.prune({ olderThan: new Date(Date.now() + 1000) })).toEqual({ runs: 1, events: 8 });
        expect(await store.readEvents('run_v5')).toEqual([]);
      } finally {
        await store.close();
      }
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'sage-event-batches-'));
describeEventBatches(
  'SQLite',
  async () => new SqliteDriver(join(dir, 'v5.db')),
  () => openSqliteStore(join(dir, 'v5.db')),
  async () => rmSync(dir, { recursive: true, force: true }),
);

const schema = testSchemaName('event_batches');
describeEventBatches(
  'Postgres',
  async () => new PostgresDriver(TEST_DATABASE_URL, { schema }),
  () => openPostgresStore(TEST_DATABASE_URL, { schema }),
  () => dropSchema(schema),
);
