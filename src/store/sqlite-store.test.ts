import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { InteractionRequest } from '../interaction/index.js';
import { openSqliteStore, openStore, DEFAULT_SQLITE_PATH } from './open-store.js';
import type { SqliteDriver } from './sql/sqlite-driver.js';
import { SqliteDriver as SqliteDriverImpl } from './sql/sqlite-driver.js';
import { sqliteBackend } from './test-support/sqlite-backend.js';
import { describeStoreContract, describeUpgradeFromV1, describeUpgradeFromV2 } from './test-support/store-contract.js';

describeStoreContract(sqliteBackend('sage-store-'));

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
      expect(driver.durability).toBe('full');
      await store.close();
      const fast = await openSqliteStore(join(tmp, 'b.db'), { synchronous: 'normal' });
      expect((fast.driver as SqliteDriver).durability).toBe('normal');
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
          return (store.driver as SqliteDriver).durability;
        } finally {
          await store.close();
        }
      };
      expect(await pragmaWith(undefined)).toBe('full');
      expect(await pragmaWith('full')).toBe('full');
      expect(await pragmaWith('normal')).toBe('normal');
      expect(await pragmaWith(' NORMAL ')).toBe('normal');
      await expect(pragmaWith('off')).rejects.toThrow(/SAGE_SQLITE_SYNCHRONOUS must be "full" or "normal", not "off"/);
      // An explicit option wins over the environment.
      const explicit = await openSqliteStore(join(tmp, 'x.db'), { synchronous: 'full', env: { SAGE_SQLITE_SYNCHRONOUS: 'normal' } });
      expect((explicit.driver as SqliteDriver).durability).toBe('full');
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

describe('SQLite query plans on the answer path', () => {
  it('finds a request by id or by its run, never by walking every request of a status (1,000 waiting runs made each answer read 1,000 rows)', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sage-plans-'));
    const file = join(d, 'sage.db');
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    const store = await openSqliteStore(file, { synchronous: 'normal' });
    try {
      const ask = (runId: string, id: string) => ({ id, runId, kind: 'confirm', title: 'Allow?', createdAt: new Date().toISOString() }) as InteractionRequest;
      const ids: string[] = [];
      for (let i = 1; i <= 3; i++) {
        const runId = `run_plan_${i}`;
        await store.createRun({ id: runId, userId: 'u', sessionId: 's', channel: 'cli', task: 't', options: { model: 'scripted:x' } }, { id: 'A', leaseMs: 60_000 });
        await store.saveInteraction(ask(runId, `${runId}:ask`), { owner: 'A', epoch: 1, events: [] });
        ids.push(`${runId}:ask`);
      }
      prepare.mockClear();
      // What answering does (the compare-and-set, the run's wait settled), a runner's poll of the
      // requests it waits for, and a run's cancel closing its pending requests.
      await store.claimAnswer(ids[0]!, { requestId: ids[0]!, kind: 'confirm', confirmed: true, userId: 'u', respondedAt: new Date().toISOString() }, { consumed: true, fence: { owner: 'A', epoch: 1 } });
      expect((await store.listInteractions({ ids, status: ['answered', 'expired', 'cancelled'] })).map((r) => r.id)).toEqual([ids[0]]);
      expect(await store.closeRunInteractions('run_plan_2', 'cancelled')).toEqual([ids[1]]);
      const statements = prepare.mock.calls.map(([sql]) => sql).filter((sql) => /\binteractions\b/.test(sql));
      expect(statements.length).toBeGreaterThan(0);
      const db = new Database(file);
      try {
        for (const sql of statements) {
          const nulls = Array.from(sql.matchAll(/\?/g), () => null);
          const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...nulls) as { detail: string }[]).map((row) => row.detail);
          expect({ sql, plan: plan.filter((detail) => /interactions_status|SCAN i\b|SCAN interactions\b/.test(detail)) }).toEqual({ sql, plan: [] });
        }
      } finally {
        db.close();
      }
    } finally {
      prepare.mockRestore();
      await store.close();
      rmSync(d, { recursive: true, force: true });
    }
  });
});
