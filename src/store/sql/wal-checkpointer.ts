import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';

const checkpointers = new Map<string, WalCheckpointer>();

/**
 * Checkpoints a WAL database from a worker thread, so the main thread never does it.
 *
 * Why: SQLite's automatic checkpoint runs inside the COMMIT that crosses `wal_autocheckpoint`
 * pages: it copies ~1,000 pages into the database file and fsyncs it, on the thread that
 * committed. Measured on this 2-core machine (load ~16): 26–74 ms per checkpoint, every ~40 commits
 * of an approval cycle — every run, SSE stream and chat of the process stalls that long, which is
 * the p99. Here the main connection turns the automatic checkpoint off and a worker with its own
 * connection runs `wal_checkpoint(PASSIVE)` (never blocks a writer or a reader) when asked.
 *
 * One worker per database file per process, shared by its connections, created on the first
 * checkpoint (a short `sage run` never starts it) and not keeping the process alive.
 */
export class WalCheckpointer {
  private worker: Worker | undefined;
  private running = false;
  private again = false;
  private failed = false;
  private idle: (() => void)[] = [];
  /** The connections relying on it, each told if the worker cannot run (it then checkpoints itself). */
  private readonly users = new Set<(error: Error) => void>();

  constructor(
    readonly location: string,
    private readonly busyTimeoutMs: number,
  ) {}

  get inUse(): boolean {
    return this.users.size > 0;
  }

  /** A connection that relies on this checkpointer; `release` when it closes. */
  retain(onUnavailable: (error: Error) => void): void {
    this.users.add(onUnavailable);
  }

  /** Asks for a checkpoint; one asked for while one runs starts when it ends. */
  request(): void {
    if (this.failed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const worker = this.start();
    if (!worker) return;
    this.running = true;
    worker.postMessage('checkpoint');
  }

  /** Resolves when no checkpoint runs or waits (tests, close). */
  settled(): Promise<void> {
    if (!this.running) return Promise.resolve();
    // Someone waits for the worker now: it must keep the process alive until it answers (an
    // unref'd worker alone would let the event loop empty under an await, exit code 13).
    this.worker?.ref();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Drops one user; the last one stops the worker, after the checkpoint that runs. */
  async release(onUnavailable: (error: Error) => void): Promise<void> {
    this.users.delete(onUnavailable);
    if (this.users.size > 0) return;
    this.again = false;
    await this.settled();
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    // The worker closes its connection first, so the last connection to close (the caller's) can
    // checkpoint and remove the WAL as SQLite does.
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  private start(): Worker | undefined {
    if (this.worker) return this.worker;
    try {
      // The worker is evaluated source (no file of its own to find from dist/ or the CLI bundle);
      // it loads better-sqlite3 by the absolute path this module resolves.
      const load = createRequire(import.meta.url);
      const sqlite = load.resolve('better-sqlite3');
      // node:worker_threads is loaded at the first checkpoint, not with the store: a short run
      // (one `sage run` turn) never checkpoints, and loading it was part of its start.
      const { Worker } = load('node:worker_threads') as typeof import('node:worker_threads');
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { sqlite, location: this.location, busyTimeoutMs: this.busyTimeoutMs },
        // It holds one connection and a few objects: small heaps keep its resident memory down.
        resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
      });
      worker.unref();
      worker.on('message', (result: { ok: boolean; message?: string }) => {
        if (!result.ok) this.fail(new Error(`checkpoint of ${this.location} failed: ${result.message}`));
        this.done();
      });
      worker.on('error', (error) => {
        this.fail(error);
        this.done();
      });
      this.worker = worker;
      return worker;
    } catch (error) {
      this.fail(error as Error);
      return undefined;
    }
  }

  private done(): void {
    this.running = false;
    if (this.again && !this.failed) {
      this.again = false;
      this.request();
      return;
    }
    for (const resolve of this.idle.splice(0)) resolve();
    this.worker?.unref();
  }

  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.again = false;
    void this.worker?.terminate();
    this.worker = undefined;
    if (checkpointers.get(this.location) === this) checkpointers.delete(this.location);
    for (const onUnavailable of this.users) onUnavailable(error);
  }
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
parentPort.on('message', (message) => {
  if (message === 'close') {
    if (db) db.close();
    parentPort.close();
    return;
  }
  try {
    if (!db) db = new (require(workerData.sqlite))(workerData.location, { timeout: workerData.busyTimeoutMs });
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String((error && error.message) || error) });
  }
});
`;

/** The process's checkpointer for a database file (see WalCheckpointer). */
export function checkpointerFor(location: string, busyTimeoutMs: number, onUnavailable: (error: Error) => void): WalCheckpointer {
  let checkpointer = checkpointers.get(location);
  if (!checkpointer) {
    checkpointer = new WalCheckpointer(location, busyTimeoutMs);
    checkpointers.set(location, checkpointer);
  }
  checkpointer.retain(onUnavailable);
  return checkpointer;
}

/** Drops a connection's hold; the last one stops the worker and forgets the checkpointer. */
export async function releaseCheckpointer(checkpointer: WalCheckpointer, onUnavailable: (error: Error) => void): Promise<void> {
  await checkpointer.release(onUnavailable);
  if (!checkpointer.inUse && checkpointers.get(checkpointer.location) === checkpointer) checkpointers.delete(checkpointer.location);
}
