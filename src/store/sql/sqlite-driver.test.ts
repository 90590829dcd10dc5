import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
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

  it('runs a transaction alone in its batch without a savepoint; when it fails, none of it is committed and the next one commits', async () => {
    const exec = vi.spyOn(Database.prototype, 'exec');
    await expect(
      driver.transaction(async (tx) => {
        await tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', ['alone', 1]);
        await tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', ['alone', 2]);
      }),
    ).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(committed('alone')).toBeUndefined();
    await driver.transaction((tx) => tx.execute('INSERT INTO t (k, v) VALUES (?, ?)', ['next', 3]));
    expect(committed('next')).toEqual({ v: 3 });
    expect(exec.mock.calls.map(([sql]) => sql)).toEqual(['BEGIN IMMEDIATE', 'ROLLBACK', 'BEGIN IMMEDIATE', 'COMMIT']);
    exec.mockRestore();
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

describe('SqliteDriver durability full: the WAL is flushed off the main thread before a commit is reported', () => {
  let dir: string;
  let fileHandleProto: FileHandle;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sage-wal-flush-'));
    const probe = await open(join(dir, 'probe'), 'w');
    fileHandleProto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('settles a transaction only after an fdatasync of the WAL that started after its COMMIT', async () => {
    const driver = new SqliteDriver(join(dir, 'f.db'));
    await driver.execute('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const order: string[] = [];
    const exec = Database.prototype.exec;
    vi.spyOn(Database.prototype, 'exec').mockImplementation(function (this: Database.Database, sql: string) {
      if (sql === 'COMMIT') order.push('commit');
      return exec.call(this, sql);
    });
    const datasync = fileHandleProto.datasync;
    vi.spyOn(fileHandleProto, 'datasync').mockImplementation(function (this: FileHandle) {
      order.push('datasync');
      return datasync.call(this);
    });
    await driver.transaction((tx) => tx.execute('INSERT INTO t (k) VALUES (?)', ['a']).then(() => order.push('resolved-inside')));
    order.push('settled');
    expect(order).toEqual(['resolved-inside', 'commit', 'datasync', 'settled']);
    await driver.close();
  });

  it('covers many concurrent commits with few flushes, and the connection commits while one runs', async () => {
    const driver = new SqliteDriver(join(dir, 'g.db'));
    await driver.execute('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const datasync = vi.spyOn(fileHandleProto, 'datasync');
    const commits = vi.spyOn(Database.prototype, 'exec');
    // Sixty-four transactions asked for in four waves a microtask apart: more than one batch.
    const all: Promise<unknown>[] = [];
    for (let wave = 0; wave < 4; wave++) {
      for (let i = 0; i < 16; i++) all.push(driver.transaction((tx) => tx.execute('INSERT INTO t (k) VALUES (?)', [`w${wave}-${i}`])));
      await Promise.resolve();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(all);
    const commitCount = commits.mock.calls.filter(([sql]) => sql === 'COMMIT').length;
    expect(commitCount).toBeGreaterThanOrEqual(1);
    expect(datasync.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(datasync.mock.calls.length).toBeLessThanOrEqual(commitCount);
    expect(await driver.query<{ n: number }>('SELECT count(*) AS n FROM t')).toEqual([{ n: 64 }]);
    await driver.close();
  });

  it('answers a read asked for after a commit only once that commit is flushed and its after-commit callbacks ran', async () => {
    const driver = new SqliteDriver(join(dir, 'r.db'));
    await driver.execute('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const order: string[] = [];
    const datasync = fileHandleProto.datasync;
    vi.spyOn(fileHandleProto, 'datasync').mockImplementation(function (this: FileHandle) {
      order.push('datasync');
      return datasync.call(this);
    });
    const write = driver.transaction(async (tx) => {
      tx.afterCommit(() => order.push('after-commit'));
      await tx.execute('INSERT INTO t (k) VALUES (?)', ['a']);
    });
    const read = driver.query<{ k: string }>('SELECT k FROM t').then((rows) => order.push(`read ${rows.map((r) => r.k).join()}`));
    await Promise.all([write, read]);
    expect(order).toEqual(['datasync', 'after-commit', 'read a']);
    await driver.close();
  });

  it('flushes after an autocommit write, but not after a read', async () => {
    const driver = new SqliteDriver(join(dir, 'h.db'));
    await driver.execute('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const datasync = vi.spyOn(fileHandleProto, 'datasync');
    await driver.query('SELECT * FROM t');
    expect(datasync).not.toHaveBeenCalled();
    await driver.execute('INSERT INTO t (k) VALUES (?)', ['x']);
    expect(datasync).toHaveBeenCalledTimes(1);
    await driver.query('INSERT INTO t (k) VALUES (?)', ['y']);
    expect(datasync).toHaveBeenCalledTimes(2);
    await driver.close();
  });

  it('rejects the callers whose commit could not be flushed, and never flushes at durability normal', async () => {
    const driver = new SqliteDriver(join(dir, 'i.db'));
    await driver.execute('CREATE TABLE t (k TEXT PRIMARY KEY)');
    vi.spyOn(fileHandleProto, 'datasync').mockRejectedValueOnce(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(driver.transaction((tx) => tx.execute('INSERT INTO t (k) VALUES (?)', ['a']))).rejects.toThrow(/EIO/);
    // The next commit's flush works again.
    await driver.transaction((tx) => tx.execute('INSERT INTO t (k) VALUES (?)', ['b']));
    await driver.close();

    vi.restoreAllMocks();
    const normal = new SqliteDriver(join(dir, 'j.db'), { synchronous: 'normal' });
    const datasync = vi.spyOn(fileHandleProto, 'datasync');
    await normal.execute('CREATE TABLE t (k TEXT PRIMARY KEY)');
    await normal.transaction((tx) => tx.execute('INSERT INTO t (k) VALUES (?)', ['a']));
    expect(datasync).not.toHaveBeenCalled();
    expect(normal.pragma('synchronous')).toBe(1);
    await normal.close();
  });
});

describe('SqliteDriver checkpoints in a worker thread', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sage-checkpoint-'));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies the WAL into the database file without the main connection ever checkpointing, and removes the WAL on close', async () => {
    const file = join(dir, 'c.db');
    const driver = new SqliteDriver(file);
    expect(driver.pragma('wal_autocheckpoint')).toBe(0);
    await driver.execute('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)');
    const pragma = vi.spyOn(Database.prototype, 'pragma');
    const exec = vi.spyOn(Database.prototype, 'exec');
    const before = statSync(file).size;
    for (let i = 0; i < 100; i++) await driver.transaction((tx) => tx.execute('INSERT INTO t (v) VALUES (?)', [String(i).padEnd(8192, 'x')]));
    await driver.checkpointsSettled();
    // 100 rows of 8 KiB reached the database file: a checkpoint ran, and not on this connection.
    expect(statSync(file).size).toBeGreaterThan(before + 64 * 8192);
    const onMain = [...pragma.mock.calls, ...exec.mock.calls].filter(([sql]) => /checkpoint/i.test(String(sql)));
    expect(onMain).toEqual([]);
    expect(await driver.query<{ n: number }>('SELECT count(*) AS n FROM t')).toEqual([{ n: 100 }]);
    await driver.close();
    // The worker closed its connection first, so ours was the last and SQLite removed the WAL.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const reopened = new Database(file, { readonly: true });
    expect(reopened.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 100 });
    reopened.close();
  });
});
