import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventSeqConflictError } from './errors.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, migrate } from './migrations.js';
import { openPostgresStore, openSqliteStore } from './open-store.js';
import type { SqlDriver } from './sql/driver.js';
import { PostgresDriver } from './sql/postgres-driver.js';
import { SqliteDriver } from './sql/sqlite-driver.js';
import type { SqlStore } from './sql-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './test-support/postgres-test-db.js';

/**
 * Schema v6 keeps a write's events as one row (a batch). A v5 database's events (one row each) are
 * read back unchanged after the upgrade, new writes append after them, a seq taken in either form
 * is refused, and prune counts events, not rows. Schema v7 stores an event's time as milliseconds
 * since the batch's previous one when its ISO string round-trips: every time reads back as written.
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
        expect(await store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
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

    it('stores times as milliseconds since the previous event and reads every time back as written', async () => {
      const store = await open();
      try {
        const run = await store.createRun({ id: 'run_v7', task: 't', userId: 'alice', sessionId: 's', channel: 'cli', options: {} }, { id: 'A', leaseMs: 60_000 });
        const times = [
          '2026-11-26T05:43:19.793Z',
          '2026-11-26T05:43:19.793Z', // the same millisecond: 0
          '2026-11-26T05:43:21.001Z',
          '2026-11-26T05:43:20.500Z', // earlier than the one before it: a negative step
          '2026-11-26T05:43:22Z', // no milliseconds: toISOString() would not give it back, kept as a string
          'not a time', // kept as a string, and the next one counts from the last numbered time
          '2026-11-26T05:43:22.250Z',
          '+010000-01-01T00:00:00.000Z', // past year 9999: still the string ISO gives back
        ];
        const events = times.map((at, i) => ({ seq: i + 1, runId: run.id, type: 'state.changed', at, data: i % 2 ? { n: i } : undefined }) as never);
        await store.write({ runId: run.id, owner: 'A', epoch: run.epoch, events: events.slice(0, 5) });
        await store.write({ runId: run.id, owner: 'A', epoch: run.epoch, events: events.slice(5) });
        const read = await store.readEvents(run.id);
        expect(read.map((e) => e.at)).toEqual(times);
        expect(read.map((e) => e.data)).toEqual(times.map((_, i) => (i % 2 ? { n: i } : null)));
        expect((await store.readEvents(run.id, { afterSeq: 6 })).map((e) => e.at)).toEqual(times.slice(6));
        // What is stored: numbers where the string round-trips, the string where it does not.
        const rows = await store.driver.query<{ events: string }>('SELECT events FROM run_events WHERE run_id = ? ORDER BY first_seq', [run.id]);
        const stored = rows.flatMap((r) => (JSON.parse(r.events) as unknown[][]).map((e) => e[2]));
        const t0 = Date.parse(times[0]!);
        expect(stored).toEqual([t0, 0, 1208, -501, '2026-11-26T05:43:22Z', 'not a time', Date.parse(times[6]!), Date.parse(times[7]!) - Date.parse(times[6]!)]);
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
