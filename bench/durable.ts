/**
 * Durable-runs benchmark (issue 5): suspend → respond → resume round trips through SQLite, bytes
 * written per checkpoint, process memory with 100,000 runs suspended in the store, and the
 * correctness probes — for Sage (synchronous FULL and NORMAL) and for the peers in bench/peers.
 *
 *   npx tsx bench/durable.ts [--n 10] [--runs 30] [--concurrency 4] [--suspended 100000] [--only sage,langgraph,openai,mastra]
 *
 * Workload (../shared/research/hitl-anchors.md §7): a mock model that emits one `echo({ i })` call
 * per turn for N turns, deciding by counting the tool results in its prompt, then "done"; every
 * call needs an approval. A cycle is: answer the pending approval → load the run from the store →
 * run until the next approval is committed and the run released (or the end). Every configuration
 * runs in its own process (node --expose-gc) with a fresh database file.
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

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Answers the pending approval and drives the run (here) to its next stop; returns the next pending id. */
async function cycle(runner: DurableRunner, store: Store, runId: string, pendingId: string, answer: Record<string, unknown> = { kind: 'confirm', confirmed: true, userId: 'bench' }): Promise<string | null> {
  const result = await runner.respond(pendingId, answer);
  let handle = result.delivered === 'resumed' ? result.handle : runner.handle(runId);
  while (handle) {
    await handle.outcome;
    handle = runner.handle(runId);
  }
  const run = await store.getRun(runId);
  if (run?.status === 'completed') return null;
  if (run?.status !== 'suspended' || !run.pendingInteractionId) throw new Error(`sage: run ${runId} is ${run?.status}`);
  // After "done" an interactive run asks for the next message: answering it empty ends the run (part of the last cycle).
  if (run.pendingInteractionId.includes(':input:')) return cycle(runner, store, runId, run.pendingInteractionId, { kind: 'input', text: '' });
  return run.pendingInteractionId;
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
  for (const table of ['runs', 'run_events', 'run_checkpoints', 'run_messages', 'run_tool_history', 'tool_calls', 'interactions']) {
    const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => `coalesce(length(${c.name}),0)`);
    const key = table === 'runs' ? 'id' : 'run_id';
    total += (db.prepare(`SELECT coalesce(sum(${cols.join('+')}),0) AS b FROM ${table} WHERE ${key} = ?`).get(runId) as { b: number }).b;
  }
  const cpCols = (db.prepare('PRAGMA table_info(run_checkpoints)').all() as { name: string }[]).map((c) => `coalesce(length(${c.name}),0)`);
  const checkpoint = (db.prepare(`SELECT coalesce(sum(${cpCols.join('+')}),0) AS b FROM run_checkpoints WHERE run_id = ?`).get(runId) as { b: number }).b;
  return { total, checkpoint };
}

async function sageWorker(sync: 'full' | 'normal'): Promise<void> {
  const n = Number(arg('n', '10'));
  const runs = Number(arg('runs', '30'));
  const concurrency = Number(arg('concurrency', '4'));
  const warmup = Number(arg('warmup', '10'));
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-durable-'));
  const path = join(dir, 'sage.db');
  const store = await openSqliteStore(path, { synchronous: sync });
  const runner = new DurableRunner({ store, runtime: runtime(n), idleSuspendMs: 0, flushDelayMs: 0 });
  await runner.open();
  const drive = async (record?: number[]) => {
    const { runId, pending } = await startSuspended(runner, store);
    let next: string | null = pending;
    while (next) {
      const t0 = performance.now();
      next = await cycle(runner, store, runId, next);
      record?.push(performance.now() - t0);
    }
    return runId;
  };
  for (let w = 0; w < warmup; w++) await drive();
  globalThis.gc?.();
  // Sequential round trips.
  const times: number[] = [];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = 0; r < runs; r++) await drive(times);
  const seqMs = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  // Concurrent runs.
  const ctimes: number[] = [];
  const t1 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let r = 0; r < Math.ceil(runs / concurrency) * 2; r++) await drive(ctimes);
  }));
  const conMs = performance.now() - t1;
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
  await runner.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  times.sort((a, b) => a - b);
  ctimes.sort((a, b) => a - b);
  const deltas = sizes.slice(1).map((s, i) => s.total - sizes[i]!.total);
  print({
    name: `sage-${sync}`,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    cyclesPerSec: times.length / (seqMs / 1000),
    cpuMsPerCycle: (cpu.user + cpu.system) / 1000 / times.length,
    concurrentP50: percentile(ctimes, 50),
    concurrentPerSec: ctimes.length / (conMs / 1000),
    concurrency,
    firstBytes: deltas[0],
    lastBytes: deltas.at(-2), // the N-th approval (the last delta is the end of the run)
    checkpointBytes: sizes[1]!.checkpoint,
    totalRunBytes: sizes.at(-1)!.total,
    cycles: times.length,
  });
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
    const tables = ['runs', 'run_events', 'run_checkpoints', 'run_messages', 'run_tool_history', 'tool_calls', 'interactions'];
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
  peer?: string;
}

function spawnOne(config: Config): Promise<Record<string, unknown>[]> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, config.command, { cwd: root, env: { ...process.env, BENCH_N: arg('n', '10'), BENCH_RUNS: arg('runs', '30') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      const results = out.split('\n').filter((l) => l.startsWith('BENCH_RESULT ')).map((l) => JSON.parse(l.slice(13)) as Record<string, unknown>);
      if (results.length === 0) results.push({ name: config.name, error: `exit ${code}: ${(err.trim().split('\n').at(-1) ?? '').slice(0, 200)}` });
      resolve(results);
    });
  });
}

const fmt = (v: unknown, digits = 2) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(digits)) : v === undefined ? '–' : String(v));
const pf = (v: unknown) => (v === true ? 'pass' : v === false ? 'FAIL' : v === undefined ? '–' : String(v));

async function parent(): Promise<void> {
  const only = arg('only', 'sage,langgraph,openai,mastra').split(',');
  const tsx = ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url)];
  const configs: Config[] = [];
  if (only.includes('sage')) {
    for (const sync of ['full', 'normal']) configs.push({ name: `sage-${sync}`, command: [...tsx, '--worker', `sage-${sync}`, ...process.argv.slice(2)] });
    for (const sync of ['full', 'normal']) configs.push({ name: `sage-${sync}-memory`, command: [...tsx, '--worker', `sage-${sync}-memory`, ...process.argv.slice(2)] });
    configs.push({ name: 'sage-probes', command: [...tsx, '--worker', 'sage-probes'] });
  }
  const peers = [
    { name: 'langgraph', file: 'durable-langgraph.mjs', needs: ['@langchain/langgraph', '@langchain/langgraph-checkpoint-sqlite'] },
    { name: 'openai', file: 'durable-openai-agents.mjs', needs: ['@openai/agents', 'better-sqlite3'] },
    { name: 'mastra', file: 'durable-mastra.mjs', needs: ['@mastra/core', '@mastra/libsql'] },
  ];
  const missing: string[] = [];
  for (const peer of peers.filter((p) => only.includes(p.name))) {
    const installed = peer.needs.every((pkg) => existsSync(join(peersDir, 'node_modules', pkg)) || existsSync(join(root, 'node_modules', pkg))) && existsSync(join(peersDir, peer.file));
    if (installed) configs.push({ name: peer.name, peer: peer.name, command: ['--expose-gc', join(peersDir, peer.file)] });
    else missing.push(`${peer.name} (${peer.needs.join(' ')})`);
  }
  const load0 = loadavg();
  const results: Record<string, unknown>[] = [];
  for (const config of configs) {
    process.stderr.write(`… ${config.name}\n`);
    results.push(...(await spawnOne(config)));
  }
  const load1 = loadavg();
  const by = (name: string) => results.find((r) => r.name === name) ?? {};
  const rows: string[][] = [];
  const header = ['runtime', 'cycle p50 ms', 'p99 ms', 'CPU ms/cycle', 'cycles/s seq', `cycles/s ×${arg('concurrency', '4')}`, 'bytes 1st approval', 'bytes N-th', 'RSS / heap, 100k suspended', 'double resume', 'stale answer', 'resume after end', 'kill -9'];
  const probes = by('sage-probes');
  for (const sync of ['full', 'normal']) {
    const r = by(`sage-${sync}`);
    const m = by(`sage-${sync}-memory`);
    rows.push([
      `Sage (SQLite synchronous=${sync.toUpperCase()})`,
      fmt(r.p50, 3), fmt(r.p99, 3), fmt(r.cpuMsPerCycle, 2), fmt(r.cyclesPerSec, 0), fmt(r.concurrentPerSec, 0), fmt(r.firstBytes), fmt(r.lastBytes),
      m.rssMB !== undefined ? `RSS ${fmt(m.rssMB, 1)} MB (Δ ${fmt(m.rssDeltaMB, 1)}), heap ${fmt(m.heapUsedMB, 1)} MB (Δ ${fmt(m.heapDeltaMB, 2)}); ${fmt(m.suspendedRuns)} runs, ${fmt(m.diskBytesPerRun, 0)} B/run on disk` : fmt(m.error),
      pf(probes.doubleResume), pf(probes.staleAnswer), pf(probes.resumeAfterCompletion), pf(probes.killBetweenExecutionAndPersistence),
    ]);
    if (r.error) rows.at(-1)![1] = String(r.error);
  }
  for (const peer of peers) {
    const r = by(peer.name);
    if (!Object.keys(r).length) continue;
    rows.push([String(r.label ?? peer.name), fmt(r.p50, 3), fmt(r.p99, 3), fmt(r.cpuMsPerCycle, 2), fmt(r.cyclesPerSec, 0), fmt(r.concurrentPerSec, 0), fmt(r.firstBytes), fmt(r.lastBytes), r.heapPerSuspendedKB !== undefined ? `heap ${fmt(r.heapPerSuspendedKB, 1)} KB/run held` : '–', pf(r.doubleResume), pf(r.staleAnswer), pf(r.resumeAfterCompletion), pf(r.killBetweenExecutionAndPersistence)]);
    if (r.error) rows.at(-1)![1] = `error: ${String(r.error)}`;
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\nDurable runs: N = ${arg('n', '10')} approvals per run, ${arg('runs', '30')} timed runs sequential; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}; load average ${load0.map((l) => l.toFixed(2)).join(' ')} → ${load1.map((l) => l.toFixed(2)).join(' ')}\n`);
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  console.log('\nbytes = all row bytes the approval cycle added for the run (events, log entries, checkpoint, tool call, interaction); a constant 1st → N-th means linear growth.');
  for (const r of results) if (r.notes) console.log(`${String(r.name)}: ${String(r.notes)}`);
  if (missing.length) {
    console.log(`\nNot measured (not installed): ${missing.join('; ')}.\nInstall the peers (versions pinned in bench/peers/package.json; better-sqlite3 builds from source when no prebuilt binary is reachable, about a minute) with:\n  npm install --prefix bench/peers`);
  }
}

const workerIndex = process.argv.indexOf('--worker');
if (workerIndex >= 0) {
  const name = process.argv[workerIndex + 1];
  if (name === 'sage-full' || name === 'sage-normal') await sageWorker(name.slice(5) as 'full' | 'normal');
  else if (name === 'sage-full-memory' || name === 'sage-normal-memory') await sageMemoryWorker(name.slice(5, -7) as 'full' | 'normal');
  else if (name === 'sage-probes') await sageProbes();
  else if (name === 'sage-kill-child') await sageKillChild(process.argv[workerIndex + 2]!, process.argv[workerIndex + 3]!);
  else throw new Error(`unknown worker ${name}`);
} else {
  await parent();
}
