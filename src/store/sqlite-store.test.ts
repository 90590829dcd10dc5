import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteStore, openStore, DEFAULT_SQLITE_PATH } from './open-store.js';
import type { SqliteDriver } from './sql/sqlite-driver.js';
import { SqliteDriver as SqliteDriverImpl } from './sql/sqlite-driver.js';
import { describeStoreContract, describeUpgradeFromV1, describeUpgradeFromV2 } from './test-support/store-contract.js';

let dir = '';
describeStoreContract({
  name: 'SQLite',
  openFresh: async () => {
    dir = mkdtempSync(join(tmpdir(), 'sage-store-'));
    return openSqliteStore(join(dir, 'sage.db'));
  },
  openSame: () => openSqliteStore(join(dir, 'sage.db')),
  cleanup: async () => rmSync(dir, { recursive: true, force: true }),
});

const v1Dir = mkdtempSync(join(tmpdir(), 'sage-v1-'));
describeUpgradeFromV1(
  'SQLite',
  async () => new SqliteDriverImpl(join(v1Dir, 'sage.db')),
  () => openSqliteStore(join(v1Dir, 'sage.db')),
  async () => rmSync(v1Dir, { recursive: true, force: true }),
);

const v2Dir = mkdtempSync(join(tmpdir(), 'sage-v2-'));
describeUpgradeFromV2(
  'SQLite',
  async () => new SqliteDriverImpl(join(v2Dir, 'sage.db')),
  () => openSqliteStore(join(v2Dir, 'sage.db')),
  async () => rmSync(v2Dir, { recursive: true, force: true }),
);

describe('SQLite durability settings', () => {
  it('runs in WAL mode with synchronous=FULL by default, so a committed answer survives power loss', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sage-sync-'));
    try {
      const store = await openSqliteStore(join(tmp, 'a.db'));
      const driver = store.driver as SqliteDriver;
      expect(driver.pragma('journal_mode')).toBe('wal');
      expect(driver.pragma('synchronous')).toBe(2); // FULL
      await store.close();
      const fast = await openSqliteStore(join(tmp, 'b.db'), { synchronous: 'normal' });
      expect((fast.driver as SqliteDriver).pragma('synchronous')).toBe(1); // NORMAL
      await fast.close();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('takes synchronous from SAGE_SQLITE_SYNCHRONOUS (normal | full, default full) and refuses anything else', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sage-sync-env-'));
    try {
      const pragmaWith = async (value: string | undefined) => {
        const store = (await openStore({ cwd: tmp, env: value === undefined ? {} : { SAGE_SQLITE_SYNCHRONOUS: value } })) as Awaited<ReturnType<typeof openSqliteStore>>;
        try {
          return (store.driver as SqliteDriver).pragma('synchronous');
        } finally {
          await store.close();
        }
      };
      expect(await pragmaWith(undefined)).toBe(2);
      expect(await pragmaWith('full')).toBe(2);
      expect(await pragmaWith('normal')).toBe(1);
      expect(await pragmaWith(' NORMAL ')).toBe(1);
      await expect(pragmaWith('off')).rejects.toThrow(/SAGE_SQLITE_SYNCHRONOUS must be "full" or "normal", not "off"/);
      // An explicit option wins over the environment.
      const explicit = await openSqliteStore(join(tmp, 'x.db'), { synchronous: 'full', env: { SAGE_SQLITE_SYNCHRONOUS: 'normal' } });
      expect((explicit.driver as SqliteDriver).pragma('synchronous')).toBe(2);
      await explicit.close();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('defaults to .sage/sage.db under the working directory when no database URL is set', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sage-default-'));
    try {
      const store = await openStore({ cwd: tmp, env: {} });
      expect(store.backend).toBe('sqlite');
      expect(store.location).toBe(join(tmp, DEFAULT_SQLITE_PATH));
      await store.close();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('SQLite data version (the cross-process wake-up poll)', () => {
  it('changes when another connection commits, never for this connection\'s own commits', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sage-dv-'));
    const mine = await openSqliteStore(join(d, 'sage.db'), { synchronous: 'normal' });
    const theirs = await openSqliteStore(join(d, 'sage.db'), { synchronous: 'normal' });
    try {
      const start = await mine.dataVersion();
      expect(typeof start).toBe('number');
      await mine.createRun({ id: 'run_dv_1', userId: 'u', sessionId: 's', channel: 'cli', task: 't', options: { model: 'scripted:x' } }, null);
      expect(await mine.dataVersion()).toBe(start);
      await theirs.createRun({ id: 'run_dv_2', userId: 'u', sessionId: 's', channel: 'cli', task: 't', options: { model: 'scripted:x' } }, null);
      const after = await mine.dataVersion();
      expect(after).not.toBe(start);
      // Reading is not a change.
      await theirs.getRun('run_dv_1');
      expect(await mine.dataVersion()).toBe(after);
    } finally {
      await mine.close();
      await theirs.close();
      rmSync(d, { recursive: true, force: true });
    }
  });
});
