import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { StoreUnavailableError, StoreUrlError } from './errors.js';
import { openPostgresStore, openStore } from './open-store.js';
import { NotificationHub } from './notification-hub.js';
import { PostgresDriver } from './sql/postgres-driver.js';
import { postgresTransport } from './sql/postgres-notifications.js';
import type { StoreNotification } from './types.js';
import { postgresBackend } from './test-support/contract-backends.js';
import { describeStoreContract, describeUpgradeFromV1, describeUpgradeFromV2 } from './test-support/store-contract.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './test-support/postgres-test-db.js';

describeStoreContract(postgresBackend('store'));

const v1Schema = testSchemaName('v1');
describeUpgradeFromV1(
  'Postgres',
  async () => new PostgresDriver(TEST_DATABASE_URL, { schema: v1Schema }),
  () => openPostgresStore(TEST_DATABASE_URL, { schema: v1Schema }),
  () => dropSchema(v1Schema),
);

const v2Schema = testSchemaName('v2');
describeUpgradeFromV2(
  'Postgres',
  async () => new PostgresDriver(TEST_DATABASE_URL, { schema: v2Schema }),
  () => openPostgresStore(TEST_DATABASE_URL, { schema: v2Schema }),
  () => dropSchema(v2Schema),
);

describe('Postgres selection', () => {
  it('is chosen when SAGE_DATABASE_URL is set', async () => {
    const s = testSchemaName('sel');
    try {
      const store = await openStore({ env: { SAGE_DATABASE_URL: TEST_DATABASE_URL, SAGE_DATABASE_SCHEMA: s } });
      expect(store.backend).toBe('postgres');
      expect(store.location).toContain(`schema ${s}`);
      await store.close();
    } finally {
      await dropSchema(s);
    }
  });

  it('reports an unreachable server as one clear error', async () => {
    await expect(openPostgresStore('postgres://postgres@127.0.0.1:1/test')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe('a malformed SAGE_DATABASE_URL', () => {
  it('is refused naming the variable and the expected form, before anything connects', async () => {
    const cases: [string, RegExp][] = [
      ['notaurl', /is not a URL/],
      ['base', /is not a URL/],
      ['user:hunter2pw@db.example:5432/app', /starts with "user:\/\/"|is not a URL/],
      ['http://127.0.0.1:5432/test', /starts with "http:\/\/"/],
      ['postgres://', /names no host/],
      ['postgres:///test', /names no host/],
      ['postgres://u@h:99999/db', /is not a URL/],
    ];
    for (const [url, reason] of cases) {
      const opening = openStore({ env: { SAGE_DATABASE_URL: url } });
      await expect(opening).rejects.toBeInstanceOf(StoreUrlError);
      const error = (await opening.catch((e: unknown) => e)) as StoreUrlError;
      expect(error.code).toBe('store_url_invalid');
      expect(error.message).toMatch(/^SAGE_DATABASE_URL /);
      expect(error.message).toMatch(reason);
      expect(error.message).toContain('postgres://user@host:5432/dbname');
      expect(error.message).not.toMatch(/ENOTFOUND|getaddrinfo/);
      // Never echoes what was set (it may carry a password).
      expect(error.message).not.toContain('hunter2pw');
    }
    await expect(openPostgresStore('notaurl')).rejects.toThrow(/^The database URL is not a URL/);
  });

  it('still accepts a socket given as ?host=', async () => {
    // Valid form; the connection fails (no socket there) as an unreachable store, not as a bad URL.
    await expect(openPostgresStore('postgres://postgres@localhost/test?host=/nonexistent-sage-socket')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe('the LISTEN connection', () => {
  it('comes back after the database drops it, and tells subscribers to re-check (resync); later notifications arrive', async () => {
    const s = testSchemaName('listen');
    const store = await openPostgresStore(TEST_DATABASE_URL, { schema: s });
    const other = await openPostgresStore(TEST_DATABASE_URL, { schema: s });
    const seen: StoreNotification[] = [];
    const perRun: StoreNotification[] = [];
    try {
      await store.subscribe('*', (n) => seen.push(n));
      await store.subscribe('run_x', (n) => perRun.push(n));
      await other.publish({ type: 'wake', runId: 'run_x', reason: 'before' });
      await waitFor(() => seen.some((n) => n.type === 'wake'));
      // The database ends every LISTEN session of this schema (a restart, a network cut, an admin).
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [`sage-listen sage_${s}`]);
        expect(killed.rowCount).toBeGreaterThanOrEqual(1);
      } finally {
        await admin.end();
      }
      await waitFor(() => seen.some((n) => n.type === 'resync'));
      expect(perRun).toContainEqual({ type: 'resync', runId: '*' });
      await other.publish({ type: 'wake', runId: 'run_x', reason: 'after' });
      await waitFor(() => seen.some((n) => n.type === 'wake' && n.reason === 'after'));
    } finally {
      await store.close();
      await other.close();
      await dropSchema(s);
    }
  });

  it("sends a transaction's notifications in one statement in the COMMIT's own message (no round trip of their own), in order; a rolled-back one sends none", async () => {
    const s = testSchemaName('notify');
    const store = await openPostgresStore(TEST_DATABASE_URL, { schema: s });
    const other = await openPostgresStore(TEST_DATABASE_URL, { schema: s });
    const seen: StoreNotification[] = [];
    const query = vi.spyOn(pg.Client.prototype, 'query');
    try {
      await other.subscribe('*', (n) => seen.push(n));
      const transport = postgresTransport(store.driver as PostgresDriver, TEST_DATABASE_URL, new NotificationHub());
      const wake = (reason: string): StoreNotification => ({ type: 'wake', runId: 'run_n', reason });
      query.mockClear();
      await store.driver.transaction(async (tx) => {
        await transport.inTx(tx, wake('one'));
        await transport.inTx(tx, wake('two'));
        // Inlined as literals: a quote and a backslash must arrive as sent.
        await transport.inTx(tx, wake("it's C:\\three"));
      });
      const texts = query.mock.calls.map(([q]) => (typeof q === 'string' ? q : ((q as { text?: string }).text ?? '')));
      expect(texts.filter((t) => t.includes('pg_notify'))).toHaveLength(1);
      // BEGIN, then one message: the notifications and the COMMIT.
      expect(texts).toHaveLength(2);
      expect(texts[1]).toMatch(/^SELECT pg_notify\(.*;\nCOMMIT$/s);
      expect(texts[1]!.match(/pg_notify\(/g)).toHaveLength(3);
      await expect(
        store.driver.transaction(async (tx) => {
          await transport.inTx(tx, wake('rolled back'));
          throw new Error('changed its mind');
        }),
      ).rejects.toThrow('changed its mind');
      await store.driver.transaction((tx) => transport.inTx(tx, wake('after')));
      // Notifications arrive in commit order: once "after" is in, the rolled-back one would be too.
      await waitFor(() => seen.some((n) => n.type === 'wake' && n.reason === 'after'));
      expect(seen.map((n) => (n.type === 'wake' ? n.reason : n.type))).toEqual(['one', 'two', "it's C:\\three", 'after']);
      await transport.close();
    } finally {
      query.mockRestore();
      await store.close();
      await other.close();
      await dropSchema(s);
    }
  });

  it('refuses a NUL in a task with a typed error, never a raw database error (nothing written)', async () => {
    const s = testSchemaName('nul');
    const store = await openPostgresStore(TEST_DATABASE_URL, { schema: s });
    try {
      const creating = store.createRun({ id: 'run_nul', userId: 'u', sessionId: 's', channel: 'web', task: 'x\u0000y', options: { model: 'scripted:x' } }, null);
      await expect(creating).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('NUL') });
      await expect(creating).rejects.not.toMatchObject({ message: expect.stringContaining('invalid byte sequence') });
      expect(await store.getRun('run_nul')).toBeUndefined();
      await expect(store.getRun('run_\u0000')).rejects.toMatchObject({ code: 'invalid_input' });
    } finally {
      await store.close();
      await dropSchema(s);
    }
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
