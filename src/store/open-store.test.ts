import { afterEach, describe, expect, it, vi } from 'vitest';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './test-support/postgres-test-db.js';

// Each backend's driver package is imported only when that backend opens: a SQLite user never
// loads pg, a Postgres deployment never loads the native better-sqlite3 module.
afterEach(() => {
  vi.doUnmock('pg');
  vi.doUnmock('better-sqlite3');
  vi.resetModules();
});

/** Replaces `name` with a module that records being loaded (and would fail if used). */
function watchLoads(name: string, loaded: string[]): void {
  vi.doMock(name, () => {
    loaded.push(name);
    return { default: {} };
  });
}

describe('opening a store loads only its own driver', () => {
  it('opens SQLite without loading pg', async () => {
    vi.resetModules();
    const loaded: string[] = [];
    watchLoads('pg', loaded);
    const { openSqliteStore } = await import('./open-store.js');
    const store = await openSqliteStore(':memory:');
    await store.createRun({ id: 'r1', userId: 'u', sessionId: 's', channel: 'cli', task: 't', options: {} }, null);
    expect((await store.getRun('r1'))?.status).toBe('running');
    await store.close();
    expect(loaded).toEqual([]);
  });

  it('opens Postgres without loading better-sqlite3', async () => {
    vi.resetModules();
    const loaded: string[] = [];
    watchLoads('better-sqlite3', loaded);
    const schema = testSchemaName('lazy');
    const { openPostgresStore } = await import('./open-store.js');
    const store = await openPostgresStore(TEST_DATABASE_URL, { schema });
    try {
      expect(await store.schemaVersion()).toBeGreaterThan(0);
      expect(loaded).toEqual([]);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  });
});
