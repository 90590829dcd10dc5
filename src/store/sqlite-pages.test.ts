import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from './open-store.js';
import type { SqliteDriver } from './sql/sqlite-driver.js';

/**
 * Page size and temp store (src/store/README.md, "Bytes on disk"): a new database gets 512-byte pages,
 * an existing one keeps its own (SQLite cannot change a WAL database's page size), and savepoint
 * journals stay in memory.
 */
describe('SQLite pages', () => {
  it('makes new databases with 512-byte pages and keeps an existing database page size', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-pages-'));
    try {
      const store = await openSqliteStore(join(dir, 'new.db'));
      const driver = store.driver as SqliteDriver;
      expect(driver.pragma('page_size')).toBe(512);
      expect(driver.pragma('temp_store')).toBe(2); // MEMORY
      await store.close();

      // A database made before (SQLite's default 4 KiB pages, WAL, with data) opens and works as it was.
      const old = new Database(join(dir, 'old.db'));
      old.pragma('journal_mode = WAL');
      old.exec("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('kept')");
      old.close();
      const reopened = await openSqliteStore(join(dir, 'old.db'));
      expect((reopened.driver as SqliteDriver).pragma('page_size')).toBe(4096);
      expect(await reopened.driver.query('SELECT x FROM t')).toEqual([{ x: 'kept' }]);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
