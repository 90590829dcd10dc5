import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteDriver } from './sqlite-driver.js';

describe('SqliteDriver group commit', () => {
  let dir: string;
  let driver: SqliteDriver;
  let reader: Database.Database;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sage-group-commit-'));
    driver = new SqliteDriver(join(dir, 'g.db'));
    await driver.execute('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)');
    // Another connection: sees only what was committed.
    reader = new Database(join(dir, 'g.db'), { readonly: true });
  });
  afterEach(async () => {
    reader.close();
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const committed = (k: string) => reader.prepare('SELECT v FROM t WHERE k = ?').get(k) as { v: number } | undefined;

  it('commits transactions asked for at once, each visible to another connection when its promise resolves', async () => {
    const seenAtResolve: (number | undefined)[] = [];
    const exec = vi.spyOn(Database.prototype, 'exec');
    await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        driver
          .transaction(async (tx) => {
            await tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', [`k${i}`, i]);
            return i;
          })
          .then((v) => {
            seenAtResolve.push(committed(`k${v}`)?.v);
          }),
      ),
    );
    expect(seenAtResolve.sort((a, b) => a! - b!)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    // One COMMIT (one fsync) for the sixteen.
    expect(exec.mock.calls.filter(([sql]) => sql === 'COMMIT')).toHaveLength(1);
    exec.mockRestore();
  });

  it('rolls back only the transaction that failed; the others of its batch commit', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        driver.transaction(async (tx) => {
          await tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', [`k${i}`, i]);
          if (i === 2) {
            await tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', ['k2-extra', 99]);
            throw new Error('refused');
          }
          // A constraint error inside one transaction is that transaction's alone.
          if (i === 4) await tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', ['k0', 0]);
          return i;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ message: 'refused' });
    expect((results[4] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(committed('k2')).toBeUndefined();
    expect(committed('k2-extra')).toBeUndefined();
    expect(committed('k4')).toBeUndefined();
    for (const k of ['k0', 'k1', 'k3', 'k5']) expect(committed(k), k).toBeDefined();
  });

  it("runs a transaction's after-commit callbacks only when it committed", async () => {
    const after: string[] = [];
    await Promise.allSettled([
      driver.transaction(async (tx) => {
        tx.afterCommit(() => after.push('a'));
        await tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', ['a', 1]);
      }),
      driver.transaction(async (tx) => {
        tx.afterCommit(() => after.push('b'));
        throw new Error('no');
      }),
    ]);
    expect(after).toEqual(['a']);
  });
});
