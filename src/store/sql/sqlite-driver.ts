import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { open, statfs, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StoreFullError, StoreUnavailableError } from '../errors.js';
import { StoreHealth } from '../store-faults.js';
import { AsyncLock } from './async-lock.js';
import { assertStorable, type Row, type SqlDriver, type SqlParam, type SqlTx } from './driver.js';
import { checkpointerFor, releaseCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';

/**
 * Commits between two checkpoints of the worker (see wal-checkpointer.ts). An approval cycle's
 * commit dirties ~25 pages, so this is about SQLite's default of 1,000 pages.
 */
const COMMITS_PER_CHECKPOINT = 32;

/** Below this much free space on the database's file system, readiness says the disk is full. */
const MIN_FREE_BYTES = 1024 * 1024;

export interface SqliteOptions {
  /**
   * `full` (default): a committed transaction survives a power loss — an answer the store accepted
   * is never lost. `normal`: in WAL mode survives a process crash but may lose the last commits on
   * power loss; faster. See docs/durability in src/store/README.md.
   */
  synchronous?: 'full' | 'normal';
  /** How long a writer waits for another process's lock, ms. Default 5000. */
  busyTimeoutMs?: number;
}

/**
 * One lock per database file per process. Connections in one process share it: better-sqlite3
 * waits for a busy lock synchronously, so a second connection blocking on the first's open
 * transaction would block the very event loop that has to finish it. Other processes are handled
 * by SQLite's own locking and the busy timeout.
 */
const locks = new Map<string, AsyncLock>();
function lockFor(location: string): AsyncLock {
  if (location === ':memory:') return new AsyncLock();
  let lock = locks.get(location);
  if (!lock) {
    lock = new AsyncLock();
    locks.set(location, lock);
  }
  return lock;
}

interface CommittedTx {
  entry: PendingTx;
  result: unknown;
  after: (() => void)[];
}

interface PendingTx {
  fn: (tx: SqlTx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * SQLite through better-sqlite3, in WAL mode so readers never block the writer.
 *
 * Durability `full` without blocking the event loop: SQLite's own `synchronous=FULL` calls
 * fdatasync inside COMMIT, on the main thread, so every commit stalls every run, SSE client and
 * chat of the process for the length of a disk flush, and no two commits can share one. Instead
 * the connection runs at `synchronous=NORMAL` (SQLite still syncs the WAL before a checkpoint and
 * its header when it is reused) and the driver flushes the WAL file itself with one fdatasync on
 * libuv's thread pool after a COMMIT, settling the callers only when it returns. The WAL is
 * append-only, so a flush covers every commit before it: commits made while one flush runs wait for
 * the next, which covers all of them (group commit across runs and requests). A caller is told
 * "committed" only once its writes are on disk, as with FULL, and every side effect Sage takes
 * waits for its intent's commit, which flushes everything written before it. A read in this
 * process answers only once the commits before it are flushed and their after-commit callbacks ran,
 * so nothing is seen here before it is on disk and notified. Another process may read a commit
 * during its flush; a power loss then loses it with everything after it, never an acknowledged one.
 */
export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const;
  /** What a resolved write promises: `full` survives power loss, `normal` a process crash. */
  readonly durability: 'full' | 'normal';
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly lock: AsyncLock;
  private readonly runner: SqlTx;
  private pendingAfterCommit: (() => void)[] = [];
  /** Transactions waiting for the connection: committed together (see transaction). */
  private batch: PendingTx[] = [];
  /** The WAL file, flushed after commits when durability is `full` (see the class comment). */
  private readonly walPath: string | undefined;
  private wal: Promise<FileHandle> | undefined;
  /** The flush running now, and the one that starts when it ends (for commits made meanwhile). */
  private flushing: Promise<void> | undefined;
  private nextFlush: Promise<void> | undefined;
  /** Settles the last committed batch (see settle); reads wait for it before they answer. */
  private settling: Promise<void> = Promise.resolve();
  /** Checkpoints the WAL off the main thread; undefined: SQLite's automatic checkpoint does it. */
  private checkpointer: WalCheckpointer | undefined;
  private commitsSinceCheckpoint = 0;
  /** Full (SQLITE_FULL) or unreadable since the last statement that failed so (see StoreHealth). */
  readonly health = new StoreHealth();
  private readonly checkpointerUnavailable = () => {
    // The worker could not run: back to SQLite's own checkpoints, on this thread.
    this.checkpointer = undefined;
    if (this.db.open) this.db.pragma('wal_autocheckpoint = 1000');
  };

  constructor(
    readonly location: string,
    options: SqliteOptions = {},
  ) {
    try {
      if (location !== ':memory:') mkdirSync(dirname(location), { recursive: true });
      this.db = new Database(location, { timeout: options.busyTimeoutMs ?? 5000 });
      // A new file only (an existing database keeps its page size): a WAL commit writes every page it
      // touches whole, and an approval cycle's two commits touch ~40 b-tree pages with a few hundred
      // bytes of change each. bench/commits.ts, 4 KiB -> 1 KiB -> 512 B pages: 118 -> 46 -> 33 KB
      // written per cycle (512 is SQLite's smallest; CPU per cycle unchanged within the noise).
      this.db.pragma('page_size = 512');
      // A page cache of 1,000 pages, not SQLite's default 2 MB (thousands of 512 B pages). A commit
      // that splits a b-tree page renumbers a page through a number past the 1 GiB lock byte
      // (balance_nonroot), and the cache's truncation at a transaction's end then walks all of it, not
      // its tail (pcache1TruncateUnsafe): every slot and page. Cachegrind, 500 approval cycles of
      // bench/durable.ts's workload after 1,650 warm ones: 294k instructions per cycle in that walk
      // (4.0% of the cycle) -> 12k at 1,000 pages, for ~0.8 page per cycle more read from the OS
      // (strace). A database of 4 KiB pages (made before 512 B) gets 4 MB.
      this.db.pragma('cache_size = 1000');
      // Savepoint journals in memory: each transaction of a group commit runs in a SAVEPOINT, whose
      // journal SQLite spills to a temp file past 64 KiB (~60 KB written per approval cycle before v6).
      this.db.pragma('temp_store = MEMORY');
      const mode = String(this.db.pragma('journal_mode = WAL', { simple: true }));
      this.durability = options.synchronous === 'normal' ? 'normal' : 'full';
      // An in-memory database has no WAL file to flush: nothing to make durable.
      this.walPath = mode === 'wal' && this.durability === 'full' ? `${location}-wal` : undefined;
      this.db.pragma(`synchronous = ${this.durability === 'full' && !this.walPath ? 'FULL' : 'NORMAL'}`);
      this.db.pragma('foreign_keys = ON');
      if (mode === 'wal') {
        this.db.pragma('wal_autocheckpoint = 0');
        this.checkpointer = checkpointerFor(location, options.busyTimeoutMs ?? 5000, this.checkpointerUnavailable);
      }
    } catch (error) {
      throw new StoreUnavailableError(location, (error as Error).message, { cause: error });
    }
    this.lock = lockFor(location);
    // Inside a transaction the lock is already held: statements run directly.
    this.runner = {
      query: <T>(sql: string, params: readonly SqlParam[] = []) => Promise.resolve(this.querySync(sql, params) as T[]),
      execute: (sql: string, params: readonly SqlParam[] = []) => Promise.resolve(this.executeSync(sql, params)),
      insertRows: (table, columns, rows, onConflict) => Promise.resolve(this.insertSync(table, columns, rows, onConflict)),
      afterCommit: (fn) => void this.pendingAfterCommit.push(fn),
    };
  }

  /** The value of a pragma, for tests and `sage runs` diagnostics. */
  pragma(name: string): unknown {
    return this.db.pragma(name, { simple: true });
  }

  /**
   * PRAGMA data_version: changes when another connection committed (never for this one's own
   * commits). Read outside the lock: it is one cheap synchronous call, and reading it inside a
   * transaction of this connection is harmless. Undefined once closed.
   */
  dataVersion(): number | undefined {
    if (!this.db.open) return undefined;
    return Number(this.db.pragma('data_version', { simple: true }));
  }

  /** Runs `work`, turning a full disk into StoreFullError and an I/O failure into StoreDownError. */
  private guard<T>(wrote: boolean, work: () => Promise<T>): Promise<T> {
    return this.health.guard(this.location, wrote, work);
  }

  /**
   * Reads the schema version, then checks the room left where the database lives: resolves when the
   * file can be read and at least MIN_FREE_BYTES are free (readiness checks). Writes that fit in the
   * WAL's free frames still succeed on a full disk, so a failed write alone would say "full" only
   * until the next small one.
   */
  async ping(): Promise<void> {
    await this.guard(false, () => this.lock.run(() => this.querySync("SELECT value FROM sage_meta WHERE key = 'schema_version'", [])));
    if (this.location === ':memory:') return;
    const fs = await statfs(dirname(this.location)).catch(() => undefined);
    if (fs && fs.bavail * fs.bsize < MIN_FREE_BYTES) throw this.health.failed(new StoreFullError(this.location), this.location);
  }

  query<T = Row>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    return this.guard(!/^\s*select\b/i.test(sql), () => this.queryUnguarded<T>(sql, params));
  }

  private async queryUnguarded<T>(sql: string, params: readonly SqlParam[]): Promise<T[]> {
    let wrote = false;
    let before: Promise<void> = Promise.resolve();
    const rows = await this.lock.run(() => {
      wrote = !this.prepare(sql).reader;
      const result = this.querySync(sql, params) as T[];
      if (wrote) this.committed();
      before = this.settling;
      return result;
    });
    if (wrote) await this.flushWal();
    // A read sees every commit before it; its caller hears back only once those commits are
    // durable and their after-commit callbacks ran, as when the flush was inside COMMIT: in this
    // process nothing is seen before it is on disk and notified.
    await before;
    return rows;
  }

  execute(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    return this.guard(true, async () => {
      const changes = await this.lock.run(() => {
        const n = this.executeSync(sql, params);
        this.committed();
        return n;
      });
      // An autocommit statement committed on its own: durable before it is reported, like a transaction.
      await this.flushWal();
      return changes;
    });
  }

  async insertRows(table: string, columns: readonly string[], rows: readonly SqlParam[][], onConflict?: string): Promise<void> {
    if (rows.length === 0) return;
    // One transaction (one flush) for all the rows, not one autocommit per row.
    await this.transaction((tx) => tx.insertRows(table, columns, rows, onConflict));
  }

  /**
   * Group commit: transactions asked for while the connection is busy are committed together —
   * one BEGIN IMMEDIATE … COMMIT (one fsync at FULL) for all of them, each in its own SAVEPOINT so
   * one that fails is rolled back alone. Each caller's promise settles only after the COMMIT that
   * holds its writes, so what it was told is durable is durable. With one transaction at a time
   * nothing changes; with 16 runs answering at once, 16 fsyncs become a few.
   */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T> {
    return this.guard(
      true,
      () =>
        new Promise<T>((resolve, reject) => {
          this.batch.push({ fn: fn as (tx: SqlTx) => Promise<unknown>, resolve: resolve as (value: unknown) => void, reject });
          // The first of a batch schedules it; the others join before it starts.
          if (this.batch.length === 1) void this.lock.run(() => this.commitBatch());
        }),
    );
  }

  /**
   * Ends the open transaction after a failure. On a full disk SQLite may already have rolled it back,
   * or refuse the ROLLBACK itself: either way nothing of it stays, and the failure the caller gets
   * is the first one, never this one (thrown here, it would escape the batch unheard).
   */
  private rollback(statement = 'ROLLBACK'): void {
    try {
      if (this.db.inTransaction) this.db.exec(statement);
    } catch {
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        // The connection keeps the transaction open only if SQLite cannot end it at all; the next BEGIN fails and says so.
      }
    }
  }

  /** Settles a committed batch once its writes are on disk; the connection is free meanwhile. */
  private async settle(done: CommittedTx[]): Promise<void> {
    try {
      await this.flushWal();
    } catch (error) {
      for (const d of done) d.entry.reject(error);
      return;
    }
    for (const d of done) {
      for (const f of d.after) f();
      d.entry.resolve(d.result);
    }
  }

  /**
   * Resolves once everything committed on this connection before the call is on disk (nothing to
   * do at `normal`). One fdatasync at a time: a call made while one runs waits for the next, which
   * starts when it ends and covers every commit made in between.
   */
  private flushWal(): Promise<void> {
    if (!this.walPath) return Promise.resolve();
    if (!this.flushing) {
      const flush = this.fdatasyncWal().finally(() => {
        if (this.flushing === flush) this.flushing = undefined;
      });
      this.flushing = flush;
      return flush;
    }
    const again = () => {
      this.nextFlush = undefined;
      return this.flushWal();
    };
    this.nextFlush ??= this.flushing.then(again, again);
    return this.nextFlush;
  }

  private async fdatasyncWal(): Promise<void> {
    // Opened once: the WAL file lives as long as any connection to the database (this one) is open.
    this.wal ??= open(this.walPath!, 'r');
    let handle: FileHandle;
    try {
      handle = await this.wal;
    } catch (error) {
      this.wal = undefined;
      // No WAL file yet: nothing was ever committed to it, so nothing waits to be flushed.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new StoreUnavailableError(this.location, `cannot open the write-ahead log to flush it: ${(error as Error).message}`, { cause: error });
    }
    await handle.datasync();
  }

  private async commitBatch(): Promise<void> {
    const entries = this.batch;
    this.batch = [];
    const done: CommittedTx[] = [];
    const failAll = (error: unknown) => {
      for (const d of done.splice(0)) d.entry.reject(error);
    };
    // A transaction alone in its batch (every one, without concurrency) needs no savepoint: when it
    // fails, rolling the whole transaction back undoes it and nothing else (two statements fewer).
    const alone = entries.length === 1;
    for (const entry of entries) {
      try {
        // IMMEDIATE takes the write lock now: two processes never both read, then both try to write.
        if (!this.db.inTransaction) this.db.exec('BEGIN IMMEDIATE');
        if (!alone) this.db.exec('SAVEPOINT sage_tx');
      } catch (error) {
        // The write lock stayed with another process past the busy timeout.
        entry.reject(error);
        continue;
      }
      this.pendingAfterCommit = [];
      try {
        const result = await entry.fn(this.runner);
        if (!alone) this.db.exec('RELEASE sage_tx');
        done.push({ entry, result, after: this.pendingAfterCommit });
      } catch (error) {
        if (this.db.inTransaction && alone) {
          this.rollback();
        } else if (this.db.inTransaction) {
          try {
            this.db.exec('ROLLBACK TO sage_tx');
            this.db.exec('RELEASE sage_tx');
          } catch {
            // The savepoint cannot be undone alone: the whole batch is rolled back, and fails together.
            this.rollback();
            failAll(error);
          }
        } else {
          // SQLite rolled the whole transaction back (a full disk, say): the batch's earlier work is gone too.
          failAll(error);
        }
        entry.reject(error);
      }
      this.pendingAfterCommit = [];
    }
    if (!this.db.inTransaction) return;
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      this.rollback();
      failAll(error);
      return;
    }
    this.committed();
    // Settled outside the lock: the next batch commits while this one's flush runs.
    this.settling = this.settle(done);
  }

  /** Counts a commit; every COMMITS_PER_CHECKPOINT of them the worker checkpoints the WAL. */
  private committed(): void {
    if (!this.checkpointer || ++this.commitsSinceCheckpoint < COMMITS_PER_CHECKPOINT) return;
    this.commitsSinceCheckpoint = 0;
    this.checkpointer.request();
  }

  /** Resolves when the worker's checkpoints asked for so far have run (tests). */
  checkpointsSettled(): Promise<void> {
    return this.checkpointer?.settled() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    await this.lock.run(async () => {
      // Flushes still running settle their callers first; then the WAL handle can go.
      await this.nextFlush?.catch(() => undefined);
      await this.flushing?.catch(() => undefined);
      const checkpointer = this.checkpointer;
      this.checkpointer = undefined;
      if (checkpointer) await releaseCheckpointer(checkpointer, this.checkpointerUnavailable);
      const wal = this.wal;
      this.wal = undefined;
      if (wal) await wal.then((h) => h.close()).catch(() => undefined);
      if (this.db.open) this.db.close();
    });
  }

  private prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private querySync(sql: string, params: readonly SqlParam[]): Row[] {
    assertStorable(params);
    const statement = this.prepare(sql);
    if (!statement.reader) {
      statement.run(...params);
      return [];
    }
    return statement.all(...params) as Row[];
  }

  private executeSync(sql: string, params: readonly SqlParam[]): number {
    assertStorable(params);
    return this.prepare(sql).run(...params).changes;
  }

  private insertSync(table: string, columns: readonly string[], rows: readonly SqlParam[][], onConflict = ''): void {
    if (rows.length === 0) return;
    const statement = this.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ${onConflict}`);
    for (const row of rows) assertStorable(row);
    for (const row of rows) statement.run(...row);
  }
}
