/**
 * Durable-runs benchmark (issues 5 and 13): the approval cycle (answer → load the run → resume →
 * run until the next ask is committed and the run released) through SQLite, like for like: every
 * runtime (Sage and the peers in bench/peers) is measured at the same durability, one table with
 * every store at WAL + synchronous=FULL and one at NORMAL, each row with p50/p99 and CPU per cycle,
 * fsyncs per cycle (counted by strace in a separate pass, so tracing never slows the timed one), and
 * cycles per second with 16 runs in flight, and Sage's store calls per cycle by method. Then bytes per approval, memory with 100,000 runs
 * suspended in the store, and the correctness probes. Ends with the goal lines of issue 13 (goal 2)
 * and one BENCH_RESULT line for bench/run-all.ts.
 *
 *   npx tsx bench/durable.ts [--n 10] [--runs 30] [--concurrency 16] [--fsync-runs 5] [--sync full,normal] [--processes 3]
 *                            [--suspended 100000] [--only sage,langgraph,openai,mastra] [--timeout 900]
 *
 * Peers: cd bench/peers && npm ci (pinned; not dependencies of Sage). fsyncs need strace on the PATH.
 *
 * Workload (../shared/research/hitl-anchors.md §7): a mock model that emits one `echo({ i })` call
 * per turn for N turns, deciding by counting the tool results in its prompt, then "done"; every
 * call needs an approval. Every configuration runs in its own process (node --expose-gc) with a
 * fresh database file; the settings reach it through BENCH_* variables (bench/peers/durable-common.mjs).
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { DurableRunner } from '../src/durable/durable-runner.js';
import type { DurableRuntime } from '../src/durable/runtime.js';
import type { Model, ModelRequest, ModelStreamPart } from '../src/model/types.js';
import { openSqliteStore } from '../src/store/open-store.js';
import type { Store } from '../src/store/index.js';
import type { Tool } from '../src/tool/types.js';
import { CONCURRENCY, CycleMeter, durability, FSYNC_PASS, inFlight } from './peers/durable-common.mjs';
import { decide } from './peers/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const peersDir = join(here, 'peers');

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

// ---------------------------------------------------------------------------------------------
// Sage worker

class CountingModel implements Model {
  readonly specificationVersion = 'sage.model.v1' as const;
  readonly id = 'bench:counting';
  constructor(private readonly n: number) {}
  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    let done = 0;
    for (const m of request.messages) if (m.role === 'tool') done++;
    const d = decide(done, this.n);
    if (d.kind === 'call') {
      yield { type: 'tool-call', call: { id: d.id, name: 'echo', input: d.input } };
      yield { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } };
    } else {
      yield { type: 'text-delta', text: d.text };
      yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
    }
  }
}

/** echo, whose side effect (a line in `log`) the probes count; not read-only, so the gate asks. */
function echoTool(log?: string, killAfter?: number): Tool<{ i: number }> {
  return {
    name: 'echo',
    description: 'echo',
    inputSchema: z.object({ i: z.number() }),
    risk: 'LOW',
    readOnly: false,
    execute: async ({ i }) => {
      if (log) appendFileSync(log, `${i}\n`);
      if (killAfter !== undefined && i === killAfter) process.kill(process.pid, 'SIGKILL');
      return `ok ${i}`;
    },
  };
}

function runtime(n: number, log?: string, killAfter?: number): DurableRuntime {
  return { createModel: () => new CountingModel(n), tools: [echoTool(log, killAfter)] };
}

/** Answers the pending approval and drives the run (here) to its next stop; returns the next pending id. */
async function cycle(runner: DurableRunner, store: Store, runId: string, pendingId: string, answer: Record<string, unknown> = { kind: 'confirm', confirmed: true, userId: 'bench' }): Promise<string | null> {
  const result = await runner.respond(pendingId, answer);
  let handle = result.delivered === 'resumed' ? result.handle : runner.handle(runId);
  let outcome: Awaited<NonNullable<typeof handle>['outcome']> | undefined;
  while (handle) {
    outcome = await handle.outcome;
    handle = runner.handle(runId);
  }
  // Where the run stopped, from its last incarnation's outcome (it resolves once that incarnation's
  // last write is committed), as the peers' harnesses take their next interruption from the run's
  // result; the store is read only when no incarnation ran here.
  const stop = outcome && !outcome.leaseLost ? { status: outcome.status as string, pendingInteractionId: outcome.pendingInteractionId ?? null } : await store.getRun(runId);
  if (stop?.status === 'completed') return null;
  // After "done" an interactive run waits (idle) for the next message: answering it empty ends the run (part of the last cycle).
  if ((stop?.status === 'idle' || stop?.status === 'suspended') && stop.pendingInteractionId?.includes(':input:')) return cycle(runner, store, runId, stop.pendingInteractionId, { kind: 'input', text: '' });
  if (stop?.status !== 'suspended' || !stop.pendingInteractionId) throw new Error(`sage: run ${runId} is ${stop?.status}`);
  return stop.pendingInteractionId;
}

async function startSuspended(runner: DurableRunner, store: Store): Promise<{ runId: string; pending: string }> {
  const handle = await runner.start('go', { model: 'bench:counting', maxSteps: 10_000 });
  await handle.outcome;
  const run = await store.getRun(handle.runId);
  if (!run?.pendingInteractionId) throw new Error(`sage: first stop is ${run?.status}`);
  return { runId: handle.runId, pending: run.pendingInteractionId };
}

/** Bytes of every row a run owns (what its writes put on disk, before page overhead). */
function runBytes(db: Database.Database, runId: string): { total: number; checkpoint: number } {
  let total = 0;
  for (const table of ['runs', 'run_events', 'run_checkpoints', 'run_messages', 'run_tool_history', 'tool_calls', 'interactions', 'run_options']) {
    const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => `coalesce(length(${c.name}),0)`);
    const key = table === 'runs' ? 'id' : 'run_id';
    total += (db.prepare(`SELECT coalesce(sum(${cols.join('+')}),0) AS b FROM ${table} WHERE ${key} = ?`).get(runId) as { b: number }).b;
  }
  const cpCols = (db.prepare('PRAGMA table_info(run_checkpoints)').all() as { name: string }[]).map((c) => `coalesce(length(${c.name}),0)`);
  const checkpoint = (db.prepare(`SELECT coalesce(sum(${cpCols.join('+')}),0) AS b FROM run_checkpoints WHERE run_id = ?`).get(runId) as { b: number }).b;
  return { total, checkpoint };
}

/**
 * How long the store's WAL flushes (FileHandle.datasync, the fdatasync each FULL commit waits for)
 * take from here, between the call and `stop()`: the disk's share of a cycle's tail. Two per cycle
 * at FULL; none at NORMAL (undefined).
 */
async function timeWalFlushes(): Promise<{ stop(): { p50: number; p99: number; count: number } | undefined }> {
  const { open } = await import('node:fs/promises');
  const probe = await open(join(tmpdir(), `sage-bench-probe-${process.pid}`), 'w');
  const proto = Object.getPrototypeOf(probe) as { datasync(this: unknown): Promise<void> };
  await probe.close();
  rmSync(join(tmpdir(), `sage-bench-probe-${process.pid}`), { force: true });
  const original = proto.datasync;
  const ms: number[] = [];
  proto.datasync = async function (this: unknown) {
    const t = performance.now();
    try {
      return await original.call(this);
    } finally {
      ms.push(performance.now() - t);
    }
  };
  return {
    stop() {
      proto.datasync = original;
      if (ms.length === 0) return undefined;
      const sorted = ms.sort((a, b) => a - b);
      return { p50: sorted[Math.floor(sorted.length / 2)]!, p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!, count: sorted.length };
    },
  };
}

/**
 * Sage's timed process for one table (BENCH_SYNC), the same shape as the peers' harnesses
 * (bench/peers/durable-common.mjs): warm-up runs, then BENCH_RUNS sequential runs with each cycle
 * timed (wall and CPU) on its own, then BENCH_CONCURRENCY runs in flight at once on the one runner
 * and store (cycles per second), then bytes per checkpoint. In the fsync pass (BENCH_FSYNC_PASS=1,
 * under strace) it only runs the cycles between their markers.
 */
async function sageWorker(): Promise<void> {
  const sync = durability().toLowerCase() as 'full' | 'normal';
  const n = Number(process.env.BENCH_N ?? 10);
  const runs = Number(process.env.BENCH_RUNS ?? 30);
  const warmup = Number(process.env.BENCH_WARMUP ?? 30);
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-durable-'));
  const path = join(dir, 'sage.db');
  const store = await openSqliteStore(path, { synchronous: sync });
  const runner = new DurableRunner({ store, runtime: runtime(n), idleSuspendMs: 0, flushDelayMs: 0 });
  await runner.open();
  const drive = async (meter?: CycleMeter) => {
    const { runId, pending } = await startSuspended(runner, store);
    let next: string | null = pending;
    let cycles = 0;
    while (next) {
      const stop = meter?.start();
      next = await cycle(runner, store, runId, next);
      stop?.();
      cycles++;
    }
    if (cycles !== n) throw new Error(`sage: ${cycles} cycles, expected ${n}`);
    return runId;
  };
  const finish = async () => {
    await runner.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const meter = new CycleMeter();
  if (FSYNC_PASS) {
    for (let w = 0; w < 3; w++) await drive();
    for (let r = 0; r < runs; r++) await drive(meter);
    await finish();
    print({ name: 'sage', cycles: meter.times.length });
    return;
  }
  for (let w = 0; w < warmup; w++) await drive();
  globalThis.gc?.();
  const flushes = await timeWalFlushes();
  const t0 = performance.now();
  for (let r = 0; r < runs; r++) await drive(meter);
  const seqMs = performance.now() - t0;
  const walFlush = flushes.stop();
  const concurrent = await inFlight(CONCURRENCY, Math.max(2, Math.ceil((runs * 2) / CONCURRENCY)), (m: CycleMeter) => drive(m));
  // Bytes per checkpoint: the run's row bytes after each suspension.
  const db = new Database(path, { readonly: true });
  const { runId, pending } = await startSuspended(runner, store);
  const sizes = [runBytes(db, runId)];
  let next: string | null = pending;
  while (next) {
    next = await cycle(runner, store, runId, next);
    sizes.push(runBytes(db, runId));
  }
  db.close();
  const storeCalls = await countStoreCalls(store, n);
  const sqlite = await timeSqliteCalls(drive);
  await finish();
  const deltas = sizes.slice(1).map((s, i) => s.total - sizes[i]!.total);
  const seq = meter.summary();
  print({
    name: 'sage',
    label: 'Sage (DurableRunner + SQLite store)',
    synchronous: sync.toUpperCase(),
    ...seq,
    cyclesPerSec: seq.cycles / (seqMs / 1000),
    ...(walFlush ? { walFlushP50: walFlush.p50, walFlushP99: walFlush.p99, walFlushes: walFlush.count } : {}),
    ...concurrent,
    firstBytes: deltas[0],
    lastBytes: deltas.at(-2), // the N-th approval (the last delta is the end of the run)
    checkpointBytes: sizes[1]!.checkpoint,
    totalRunBytes: sizes.at(-1)!.total,
    storeCalls,
    sqliteMsPerCycle: sqlite,
  });
}

/**
 * The time a cycle spends inside SQLite's calls on the main thread (statements, BEGIN and COMMIT:
 * SQLite's own work, better-sqlite3's binding, the WAL frames' writes), ms per cycle: the part of a
 * cycle no runtime storing these rows in SQLite avoids. Taken after the timed passes, on three more
 * runs, their cycles only (wrapping each call costs a little, so these cycles are not timed).
 */
async function timeSqliteCalls(drive: (meter: CycleMeter) => Promise<unknown>): Promise<number> {
  const probe = new Database(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  const databaseProto = (Database as unknown as { prototype: Record<string, (...a: unknown[]) => unknown> }).prototype;
  let inCycle = false;
  let cycles = 0;
  let ns = 0n;
  const wrap = (target: Record<string, (...a: unknown[]) => unknown>, name: string) => {
    const original = target[name]!;
    target[name] = function (this: unknown, ...a: unknown[]) {
      if (!inCycle) return original.apply(this, a);
      const t = process.hrtime.bigint();
      try {
        return original.apply(this, a);
      } finally {
        ns += process.hrtime.bigint() - t;
      }
    };
    return () => (target[name] = original);
  };
  // Cycles are marked as the timed ones are: from the answer to the run's next stop.
  const meter = new (class extends CycleMeter {
    override start() {
      inCycle = true;
      return () => {
        inCycle = false;
        cycles++;
      };
    }
  })();
  const undo = [wrap(databaseProto, 'exec'), ...['run', 'get', 'all', 'iterate'].map((m) => wrap(statementProto, m))];
  try {
    for (let r = 0; r < 3; r++) await drive(meter);
  } finally {
    for (const u of undo) u();
  }
  return Number(ns) / 1e6 / cycles;
}

/**
 * The runner's own store calls per approval cycle, by method (`write` = one fenced transaction):
 * three more runs, untimed, on a second runner over a counting view of the same store — the timed
 * runner never goes through the wrapper. The bench's own reads (the run's status after a cycle) are
 * not counted.
 */
async function countStoreCalls(store: Store, n: number): Promise<Record<string, number>> {
  const counts = new Map<string, number>();
  let counting = false;
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (counting) counts.set(String(key), (counts.get(String(key)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const runner = new DurableRunner({ store: counted, runtime: runtime(n), idleSuspendMs: 0, flushDelayMs: 0 });
  let cycles = 0;
  for (let r = 0; r < 3; r++) {
    const { runId, pending } = await startSuspended(runner, store);
    let next: string | null = pending;
    while (next) {
      counting = true;
      next = await cycle(runner, store, runId, next);
      counting = false;
      cycles++;
    }
  }
  await runner.close();
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / cycles) * 100) / 100]));
}

/** Memory with `count` suspended runs that live only in the store. */
async function sageMemoryWorker(sync: 'full' | 'normal'): Promise<void> {
  const count = Number(arg('suspended', '100000'));
  const n = Number(arg('n', '10'));
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-mem-'));
  const path = join(dir, 'sage.db');
  // One real suspended run, then its rows copied `count` times with the ids replaced: the writes
  // the runner itself makes when a run suspends at its first approval.
  {
    const store = await openSqliteStore(path, { synchronous: 'normal' });
    const runner = new DurableRunner({ store, runtime: runtime(n), idleSuspendMs: 0, flushDelayMs: 0 });
    const { runId } = await startSuspended(runner, store);
    await runner.close();
    await store.close();
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const tables = ['runs', 'run_events', 'run_checkpoints', 'run_messages', 'run_tool_history', 'tool_calls', 'interactions', 'run_options'];
    const inserts = tables.map((table) => {
      const cols = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string }[];
      const exprs = cols.map((c) => (c.type.toUpperCase().includes('TEXT') ? `replace(${c.name}, @old, @new)` : c.name));
      const key = table === 'runs' ? 'id' : 'run_id';
      return db.prepare(`INSERT INTO ${table} (${cols.map((c) => c.name).join(',')}) SELECT ${exprs.join(',')} FROM ${table} WHERE ${key} = @old`);
    });
    const copy = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) for (const s of inserts) s.run({ old: runId, new: `${runId.slice(0, -8)}${i.toString(16).padStart(8, '0')}` });
    });
    for (let i = 0; i < count - 1; i += 10_000) copy(i, Math.min(count - 1, i + 10_000));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
  const fileBytes = statSync(path).size;
  globalThis.gc?.();
  const before = process.memoryUsage();
  const store = await openSqliteStore(path, { synchronous: sync });
  const runner = new DurableRunner({ store, runtime: runtime(n), idleSuspendMs: 0, flushDelayMs: 0 });
  await runner.open();
  // The process is a live server for them: maintenance ran, they are listed, and one answered resumes.
  await runner.expireDue();
  const suspended = await store.listRuns({ status: ['suspended'], limit: 100 });
  const one = suspended[0]!;
  await cycle(runner, store, one.id, one.pendingInteractionId!);
  const total = (new Database(path, { readonly: true }).prepare(`SELECT count(*) AS c FROM runs WHERE status = 'suspended'`).get() as { c: number }).c;
  globalThis.gc?.();
  await new Promise((r) => setTimeout(r, 50));
  globalThis.gc?.();
  const after = process.memoryUsage();
  await runner.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  print({ name: `sage-${sync}-memory`, suspendedRuns: total, rssMB: after.rss / 1e6, heapUsedMB: after.heapUsed / 1e6, rssDeltaMB: (after.rss - before.rss) / 1e6, heapDeltaMB: (after.heapUsed - before.heapUsed) / 1e6, diskBytesPerRun: fileBytes / count });
}

/** The correctness probes for Sage. */
async function sageProbes(): Promise<void> {
  const n = 3;
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-probe-'));
  const path = join(dir, 'sage.db');
  const log = join(dir, 'side.log');
  writeFileSync(log, '');
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const probes: Record<string, boolean | string> = {};
  const storeA = await openSqliteStore(path);
  const storeB = await openSqliteStore(path);
  const a = new DurableRunner({ store: storeA, runtime: runtime(n, log), idleSuspendMs: 0, flushDelayMs: 0 });
  const b = new DurableRunner({ store: storeB, runtime: runtime(n, log), idleSuspendMs: 0, flushDelayMs: 0 });
  // 1. Concurrent double resume: two runners answer the same approval at once.
  {
    const { runId, pending } = await startSuspended(a, storeA);
    const settled = await Promise.allSettled([cycle(a, storeA, runId, pending), cycle(b, storeB, runId, pending)]);
    for (let h = a.handle(runId) ?? b.handle(runId); h; h = a.handle(runId) ?? b.handle(runId)) await h.outcome;
    const rejected = settled.filter((s) => s.status === 'rejected') as PromiseRejectedResult[];
    probes.doubleResume = lines().filter((l) => l === '0').length === 1 && rejected.length === 1 && /already answered/.test(String(rejected[0]!.reason?.message));
    // 2. A stale answer: the first approval again, now that the second is pending.
    const run = await storeA.getRun(runId);
    const stale = await b.respond(pending, { kind: 'confirm', confirmed: false }).then(() => 'accepted', (e: Error) => e.message);
    probes.staleAnswer = stale !== 'accepted' && run?.pendingInteractionId !== pending;
    // 3. Resume after completion.
    let next: string | null = run!.pendingInteractionId;
    while (next) next = await cycle(a, storeA, runId, next);
    const late = await a.resume(runId).then(() => 'resumed', (e: Error) => e.constructor.name);
    probes.resumeAfterCompletion = late === 'RunFinishedError' && lines().length === n;
  }
  await a.close();
  await b.close();
  await storeA.close();
  await storeB.close();
  // 4. kill -9 between the side effect and its record: a child appends line 0 and dies.
  {
    writeFileSync(log, '');
    const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--worker', 'sage-kill-child', path, log], { cwd: root, stdio: 'inherit' });
    const store = await openSqliteStore(path);
    const runner = new DurableRunner({ store, runtime: runtime(n, log), idleSuspendMs: 0, flushDelayMs: 0, leaseMs: 200 });
    await new Promise((r) => setTimeout(r, 300)); // the dead child's lease expires
    const { resumed } = await runner.recover();
    const runId = resumed[0]!;
    for (let h = runner.handle(runId); h; h = runner.handle(runId)) await h.outcome;
    const calls = await store.listToolCalls(runId);
    const interrupted = calls.find((c) => c.toolCallId === 'call_0')?.status === 'interrupted';
    const zeroes = lines().filter((l) => l === '0').length;
    probes.killBetweenExecutionAndPersistence = child.signal === 'SIGKILL' && zeroes === 1 && interrupted;
    await runner.close();
    await store.close();
  }
  rmSync(dir, { recursive: true, force: true });
  print({ name: 'sage-probes', ...probes });
}

async function sageKillChild(path: string, log: string): Promise<void> {
  const store = await openSqliteStore(path);
  // Approvals off (allow-all gate) so the call runs at once; the tool dies right after its side effect.
  const { allowAllGate } = await import('../src/permission/minimal-gate.js');
  const runner = new DurableRunner({ store, runtime: { ...runtime(3, log, 0), createGate: () => allowAllGate }, idleSuspendMs: 0, flushDelayMs: 0, leaseMs: 200 });
  const handle = await runner.start('go', { model: 'bench:counting' });
  await handle.outcome;
  throw new Error('the child should have died');
}

function print(result: Record<string, unknown>): void {
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
}

// ---------------------------------------------------------------------------------------------
// The parent

interface Config {
  name: string;
  command: string[];
  env?: Record<string, string>;
}

type Result = Record<string, unknown>;

const MARK = /\baccess(?:at2?)?\((?:AT_FDCWD, )?"\/\.sage-bench-mark\/(begin|end)"/;
const FSYNC = /\b(?:fsync|fdatasync)\(/;

/** The line of a worker's stderr that names its error (Node ends a crash with its version line). */
function lastError(stderr: string): string {
  const lines = stderr.trim().split('\n');
  return (lines.findLast((l) => /\b[A-Za-z]*Error\b/.test(l)) ?? lines.at(-1) ?? '').trim().slice(0, 200);
}

/** Runs one worker; with `trace`, under strace, writing its syscall log there. */
function spawnOne(config: Config, trace?: string): Promise<Result[]> {
  const timeoutMs = Number(arg('timeout', '900')) * 1000;
  const env = { ...process.env, BENCH_N: arg('n', '10'), BENCH_RUNS: arg('runs', '30'), BENCH_CONCURRENCY: arg('concurrency', '16'), ...config.env };
  // --seccomp-bpf: only the traced syscalls stop the process; every other one runs at full speed.
  const [command, args] = trace
    ? ['strace', ['-f', '--seccomp-bpf', '-qq', '-e', 'trace=fsync,fdatasync,access,faccessat,faccessat2', '-o', trace, process.execPath, ...config.command]]
    : [process.execPath, config.command];
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve([{ name: config.name, error: `could not start ${command}: ${error.message}` }]);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const results = out.split('\n').filter((l) => l.startsWith('BENCH_RESULT ')).map((l) => JSON.parse(l.slice(13)) as Result);
      if (results.length === 0) results.push({ name: config.name, error: signal === 'SIGKILL' ? `killed after ${timeoutMs / 1000} s` : `exit ${code}: ${lastError(err)}` });
      resolve(results);
    });
  });
}

/**
 * fsync + fdatasync calls in an strace log: inside the cycles' markers (the figure in the table),
 * and over the whole marked block, each run's start included (a check that no commit of a cycle
 * lands after its end marker).
 */
function countFsyncs(log: string): { inCycles: number; block: number; cycles: number } {
  let inside = false;
  let started = false;
  let inCycles = 0;
  let sinceStart = 0;
  let block = 0;
  let cycles = 0;
  for (const line of log.split('\n')) {
    const mark = MARK.exec(line);
    if (mark) {
      inside = mark[1] === 'begin';
      if (inside) started = true;
      else {
        cycles++;
        block = sinceStart; // the block ends at the last cycle's end marker
      }
      continue;
    }
    if (!FSYNC.test(line)) continue;
    if (inside) inCycles++;
    if (started) sinceStart++;
  }
  return { inCycles, block, cycles };
}

function hasStrace(): boolean {
  return spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;
}

const fmt = (v: unknown, digits = 2) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(digits)) : v === undefined ? '–' : String(v));
const pf = (v: unknown) => (v === true ? 'pass' : v === false ? 'FAIL' : v === undefined ? '–' : String(v));
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

const TIMED = ['p50', 'p99', 'cpuMsPerCycle', 'cyclesPerSec', 'concurrentPerSec', 'concurrentP50', 'walFlushP50', 'walFlushP99', 'sqliteMsPerCycle'] as const;

/**
 * One result from a runtime's processes: each timed figure is the median over the processes that
 * succeeded (with the p50's min and max), the rest (label, bytes, probes) from the first of them.
 */
function medianOf(results: Result[]): Result {
  const ok = results.filter((r) => !r.error);
  if (ok.length === 0) return results[0]!;
  const failed = results.filter((r) => r.error);
  const merged: Result = Object.assign({}, ...ok.slice().reverse(), { processes: ok.length }, failed.length ? { failed: `${failed.length} of ${results.length} processes failed: ${String(failed[0]!.error)}` } : {});
  for (const key of TIMED) {
    const values = ok.map((r) => num(r[key])).filter((v): v is number => v !== undefined).sort((a, b) => a - b);
    if (values.length) merged[key] = values.length % 2 ? values[(values.length - 1) / 2] : (values[values.length / 2 - 1]! + values[values.length / 2]!) / 2;
    if (key === 'p50' && values.length > 1) merged.p50Range = [values[0], values.at(-1)];
  }
  return merged;
}

interface Goal {
  goal: string;
  value?: number;
  met?: boolean;
  detail: string;
}

async function parent(): Promise<void> {
  const only = arg('only', 'sage,langgraph,openai,mastra').split(',');
  const syncs = arg('sync', 'full,normal').split(',') as ('full' | 'normal')[];
  const concurrency = Number(arg('concurrency', '16'));
  const fsyncRuns = arg('fsync-runs', '5');
  const processes = Math.max(1, Number(arg('processes', '3')));
  const tsx = ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url)];
  const runtimes: { name: string; command: string[] }[] = [];
  if (only.includes('sage')) runtimes.push({ name: 'sage', command: [...tsx, '--worker', 'sage'] });
  const peers = [
    { name: 'langgraph', file: 'durable-langgraph.mjs', needs: ['@langchain/langgraph', '@langchain/langgraph-checkpoint-sqlite', 'better-sqlite3'] },
    { name: 'openai', file: 'durable-openai-agents.mjs', needs: ['@openai/agents', 'better-sqlite3'] },
    { name: 'mastra', file: 'durable-mastra.mjs', needs: ['@mastra/core', '@mastra/libsql'] },
  ];
  const missing: string[] = [];
  for (const peer of peers.filter((p) => only.includes(p.name))) {
    const installed = peer.needs.every((pkg) => existsSync(join(peersDir, 'node_modules', pkg))) && existsSync(join(peersDir, peer.file));
    if (installed) runtimes.push({ name: peer.name, command: ['--expose-gc', join(peersDir, peer.file)] });
    else missing.push(`${peer.name} (${peer.needs.join(' ')})`);
  }
  const strace = hasStrace();
  const traceDir = mkdtempSync(join(tmpdir(), 'sage-bench-strace-'));
  const load0 = loadavg();
  // Round robin: every runtime's timed process for one table, then the next table, then again for
  // each of --processes: a change of load falls on all of them alike. Each figure is the median over
  // the processes. The peers' probes (correctness, not speed) run once, in the first process.
  const timedAll = new Map<string, Result[]>();
  const fsyncs = new Map<string, { inCycles: number; block: number; cycles: number } | { error: string }>();
  const extra: Result[] = [];
  for (let p = 0; p < processes; p++) {
    for (const sync of syncs) {
      for (const rt of runtimes) {
        process.stderr.write(`… ${rt.name} at ${sync.toUpperCase()}${processes > 1 ? ` (${p + 1} of ${processes})` : ''}\n`);
        const [r] = await spawnOne({ name: rt.name, command: rt.command, env: { BENCH_SYNC: sync, BENCH_PROBES: p === 0 && sync === syncs[0] ? '1' : '0' } });
        const key = `${rt.name}-${sync}`;
        timedAll.set(key, [...(timedAll.get(key) ?? []), r ?? { name: rt.name, error: 'no result' }]);
      }
    }
  }
  const timed = new Map<string, Result>([...timedAll].map(([key, rs]) => [key, medianOf(rs)]));
  for (const sync of syncs) {
    for (const rt of runtimes) {
      if (!strace) continue;
      process.stderr.write(`… ${rt.name} at ${sync.toUpperCase()}, fsync pass under strace\n`);
      const log = join(traceDir, `${rt.name}-${sync}.strace`);
      const [r] = await spawnOne({ name: rt.name, command: rt.command, env: { BENCH_SYNC: sync, BENCH_FSYNC_PASS: '1', BENCH_RUNS: fsyncRuns, BENCH_PROBES: '0' } }, log);
      if (r?.error || !existsSync(log)) fsyncs.set(`${rt.name}-${sync}`, { error: String(r?.error ?? 'no strace log') });
      else {
        const counted = countFsyncs(readFileSync(log, 'utf8'));
        fsyncs.set(`${rt.name}-${sync}`, counted.cycles === r?.cycles ? counted : { error: `markers saw ${counted.cycles} cycles, the worker ran ${String(r?.cycles)}` });
      }
    }
  }
  if (only.includes('sage')) {
    for (const sync of syncs) {
      process.stderr.write(`… sage memory at ${sync.toUpperCase()}\n`);
      extra.push(...(await spawnOne({ name: `sage-${sync}-memory`, command: [...tsx, '--worker', `sage-${sync}-memory`, '--suspended', arg('suspended', '100000'), '--n', arg('n', '10')] })));
    }
    process.stderr.write('… sage probes\n');
    extra.push(...(await spawnOne({ name: 'sage-probes', command: [...tsx, '--worker', 'sage-probes'] })));
  }
  rmSync(traceDir, { recursive: true, force: true });
  const load1 = loadavg();

  const fsyncOf = (key: string) => {
    const f = fsyncs.get(key);
    if (!f) return { cell: strace ? '–' : 'no strace', block: '–' };
    if ('error' in f) return { cell: `error: ${f.error}`, block: '–' };
    return { cell: fmt(f.inCycles / f.cycles, 2), block: fmt(f.block / f.cycles, 2), value: f.inCycles / f.cycles };
  };
  const header = ['runtime', 'cycle p50 ms', 'p99 ms', 'CPU ms/cycle', 'fsyncs/cycle', 'fsyncs/cycle incl. start', 'cycles/s seq', `cycles/s, ${concurrency} in flight`, 'peer p50 ÷ Sage p50'];
  const label = (rt: string) => String([...timed.values()].find((r) => r.name === rt && r.label)?.label ?? rt);
  const rowsJson: Result[] = [];
  console.log(`\nDurable approval cycle (answer → load → resume → run to the next ask, committed): N = ${arg('n', '10')} approvals per run, ${arg('runs', '30')} timed runs one after another, then ${concurrency} runs in flight${processes > 1 ? `; median of ${processes} processes per runtime and table, run round robin (p50 min–max in brackets)` : ''}; fsyncs counted by strace in a separate pass of ${fsyncRuns} runs (its timings unused). Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}; load average ${load0.map((l) => l.toFixed(2)).join(' ')} → ${load1.map((l) => l.toFixed(2)).join(' ')}`);
  for (const sync of syncs) {
    const sage = timed.get(`sage-${sync}`);
    const rows: string[][] = [];
    for (const rt of runtimes) {
      const r = timed.get(`${rt.name}-${sync}`) ?? {};
      const f = fsyncOf(`${rt.name}-${sync}`);
      const ratio = rt.name !== 'sage' && num(r.p50) && num(sage?.p50) ? fmt(num(r.p50)! / num(sage!.p50)!, 2) : '–';
      const range = Array.isArray(r.p50Range) ? ` (${fmt(r.p50Range[0], 2)}–${fmt(r.p50Range[1], 2)})` : '';
      rows.push(r.error ? [label(rt.name), `error: ${String(r.error)}`, '', '', '', '', '', '', ''] : [label(rt.name), `${fmt(r.p50, 3)}${range}`, fmt(r.p99, 3), fmt(r.cpuMsPerCycle, 3), f.cell, f.block, fmt(r.cyclesPerSec, 0), fmt(r.concurrentPerSec, 0), ratio]);
      rowsJson.push({ runtime: rt.name, synchronous: sync.toUpperCase(), ...(r.storeCalls ? { storeCallsPerCycle: r.storeCalls } : {}), p50: r.p50, p50Range: r.p50Range, processes: r.processes, p99: r.p99, cpuMsPerCycle: r.cpuMsPerCycle, fsyncsPerCycle: f.value, cyclesPerSec: r.cyclesPerSec, concurrentPerSec: r.concurrentPerSec, concurrency, error: r.error, failed: r.failed });
    }
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    console.log(`\nEvery runtime on SQLite, WAL, synchronous=${sync.toUpperCase()}\n`);
    console.log(line(header));
    console.log(line(widths.map((w) => '-'.repeat(w))));
    for (const row of rows) console.log(line(row));
  }
  console.log(`\nfsyncs/cycle = fsync + fdatasync calls between a cycle's start and end markers, per cycle; "incl. start" = all of them from the first cycle's start to the last one's end (each run's start in between), per cycle. CPU = the process's user + system time around each cycle (all its threads). cycles/s in flight counts each run's start in the wall time.`);
  for (const sync of syncs) {
    const calls = timed.get(`sage-${sync}`)?.storeCalls as Record<string, number> | undefined;
    if (calls) console.log(`Sage store calls per cycle at ${sync.toUpperCase()} (the runner's own, by method; write = one fenced transaction): ${Object.entries(calls).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')}`);
  }
  for (const [key, r] of timed) if (r.failed) console.log(`${key}: ${String(r.failed)} (the figures are the others' median)`);
  if (!strace) console.log('fsyncs not measured: strace is not installed (apt-get install strace); the timings above are unaffected.');
  console.log('Mastra: LibSQLStore sets synchronous=NORMAL on one pooled libsql connection only (others keep FULL); the harness sets every connection to the table\'s level.');

  // Bytes, memory and the correctness probes (issue 5), from the first table's processes.
  const first = syncs[0]!;
  const probes = extra.find((r) => r.name === 'sage-probes') ?? {};
  const header2 = ['runtime', 'bytes 1st approval', 'bytes N-th', 'RSS / heap, suspended runs', 'double resume', 'stale answer', 'resume after end', 'kill -9'];
  const rows2: string[][] = [];
  for (const sync of syncs) {
    const m = extra.find((r) => r.name === `sage-${sync}-memory`);
    if (!m) continue;
    const r = timed.get(`sage-${sync}`) ?? {};
    rows2.push([`Sage (synchronous=${sync.toUpperCase()})`, fmt(r.firstBytes), fmt(r.lastBytes), m.rssMB !== undefined ? `RSS ${fmt(m.rssMB, 1)} MB (Δ ${fmt(m.rssDeltaMB, 1)}), heap ${fmt(m.heapUsedMB, 1)} MB (Δ ${fmt(m.heapDeltaMB, 2)}); ${fmt(m.suspendedRuns)} runs, ${fmt(m.diskBytesPerRun, 0)} B/run on disk` : fmt(m.error), pf(probes.doubleResume), pf(probes.staleAnswer), pf(probes.resumeAfterCompletion), pf(probes.killBetweenExecutionAndPersistence)]);
  }
  for (const rt of runtimes.filter((x) => x.name !== 'sage')) {
    const r = timed.get(`${rt.name}-${first}`) ?? {};
    rows2.push([label(rt.name), fmt(r.firstBytes), fmt(r.lastBytes), '–', pf(r.doubleResume), pf(r.staleAnswer), pf(r.resumeAfterCompletion), pf(r.killBetweenExecutionAndPersistence)]);
  }
  if (rows2.length) {
    const widths = header2.map((h, i) => Math.max(h.length, ...rows2.map((row) => row[i]!.length)));
    const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    console.log(`\nBytes per approval, memory with ${arg('suspended', '100000')} suspended runs, correctness probes\n`);
    console.log(line(header2));
    console.log(line(widths.map((w) => '-'.repeat(w))));
    for (const row of rows2) console.log(line(row));
    console.log('\nbytes = all row bytes the approval cycle added for the run (events, log entries, checkpoint, tool call, interaction); a constant 1st → N-th means linear growth.');
    for (const r of [...timed.values(), ...extra]) if (r.notes) console.log(`${String(r.name)}: ${String(r.notes)}`);

  }
  if (missing.length) {
    console.log(`\nNot measured (not installed): ${missing.join('; ')}.\nInstall the peers (versions pinned in bench/peers/package-lock.json; better-sqlite3 builds from source when no prebuilt binary is reachable, about a minute) with:\n  cd bench/peers && npm ci`);
  }

  // The goals of issue 13 (goal 2).
  const goals: Goal[] = [];
  const speedGoal = (sync: 'full' | 'normal', times: number) => {
    const sage = num(timed.get(`sage-${sync}`)?.p50);
    const peerP50s = runtimes.filter((rt) => rt.name !== 'sage').map((rt) => ({ name: label(rt.name), p50: num(timed.get(`${rt.name}-${sync}`)?.p50) })).filter((p) => p.p50 !== undefined) as { name: string; p50: number }[];
    const fastest = peerP50s.sort((a, b) => a.p50 - b.p50)[0];
    const goal = `Sage cycle p50 ≥ ${times}× faster than the fastest peer at ${sync.toUpperCase()}`;
    if (!syncs.includes(sync)) return;
    if (sage === undefined || !fastest) goals.push({ goal, detail: sage === undefined ? 'Sage not measured' : 'no peer measured' });
    else {
      // The goal's cycle beside the part of Sage's that is SQLite's own calls (timed in the same processes).
      const sqlite = num(timed.get(`sage-${sync}`)?.sqliteMsPerCycle);
      const floor = sqlite === undefined ? '' : `; the goal is a cycle of ≤ ${fmt(fastest.p50 / times, 3)} ms, Sage's calls into SQLite alone take ${fmt(sqlite, 3)} ms of it`;
      goals.push({ goal, value: fastest.p50 / sage, met: fastest.p50 / sage >= times, detail: `${fmt(fastest.p50 / sage, 2)}× (${fastest.name} ${fmt(fastest.p50, 3)} ms vs Sage ${fmt(sage, 3)} ms${floor})` });
    }
  };
  speedGoal('full', 3);
  speedGoal('normal', 10);
  const sageFull = timed.get('sage-full');
  if (sageFull) {
    const p99 = num(sageFull.p99);
    // The disk's share: a cycle waits for two WAL fdatasyncs at FULL, timed in the same cycles.
    const flush = num(sageFull.walFlushP99) === undefined ? '' : ` (its WAL fdatasyncs in the same cycles: p50 ${fmt(sageFull.walFlushP50, 3)} ms, p99 ${fmt(sageFull.walFlushP99, 3)} ms)`;
    goals.push({ goal: 'Sage cycle p99 ≤ 5 ms at FULL', value: p99, met: p99 === undefined ? undefined : p99 <= 5, detail: `${fmt(p99, 3)} ms${flush}` });
    const cpu = num(sageFull.cpuMsPerCycle);
    // Where it goes: SQLite's calls on the main thread, and what FULL adds over NORMAL (the fdatasyncs' kernel time and the wake-ups around them).
    const sqlite = num(sageFull.sqliteMsPerCycle);
    const normalCpu = num(timed.get('sage-normal')?.cpuMsPerCycle);
    const parts = [sqlite === undefined ? '' : `in SQLite's calls: ${fmt(sqlite, 3)} ms`, normalCpu === undefined || cpu === undefined ? '' : `FULL over NORMAL: +${fmt(cpu - normalCpu, 3)} ms`].filter(Boolean);
    goals.push({ goal: 'Sage CPU per cycle ≤ 0.5 ms at FULL', value: cpu, met: cpu === undefined ? undefined : cpu <= 0.5, detail: `${fmt(cpu, 3)} ms${parts.length ? ` (${parts.join('; ')})` : ''}` });
    const perSec = num(sageFull.concurrentPerSec);
    goals.push({ goal: `Sage ≥ 1,000 cycles/s with ${concurrency} runs in flight at FULL`, value: perSec, met: perSec === undefined || concurrency !== 16 ? undefined : perSec >= 1000, detail: `${fmt(perSec, 0)} cycles/s${concurrency !== 16 ? ` (at ${concurrency} in flight, not the goal's 16)` : ''}` });
  }
  console.log('');
  for (const g of goals) console.log(`goal: ${g.goal}: ${g.detail} — ${g.met === undefined ? 'not measured' : g.met ? 'met' : 'MISSED'}`);
  console.log(`BENCH_RESULT ${JSON.stringify({ bench: 'durable', loadavg: { before: load0, after: load1 }, strace, rows: rowsJson, goals: goals.map(({ goal, value, met }) => ({ goal, value, met })) })}`);
}

const workerIndex = process.argv.indexOf('--worker');
if (workerIndex >= 0) {
  const name = process.argv[workerIndex + 1];
  if (name === 'sage') await sageWorker();
  else if (name === 'sage-full-memory' || name === 'sage-normal-memory') await sageMemoryWorker(name.slice(5, -7) as 'full' | 'normal');
  else if (name === 'sage-probes') await sageProbes();
  else if (name === 'sage-kill-child') await sageKillChild(process.argv[workerIndex + 2]!, process.argv[workerIndex + 3]!);
  else throw new Error(`unknown worker ${name}`);
} else {
  await parent();
}
