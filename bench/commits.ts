/**
 * Durable commits (issue 13, goal 1; issue 11: one transaction per step): how many store commits
 * a durable run makes per step when it does not wait, and per approval cycle (ask → suspended →
 * answer → resume → the tool → the next ask), counted by wrapping the store's committing calls
 * (createRun, write, saveInteraction, claimAnswer, claimRun, closeInteraction). Counts do not depend
 * on the machine's load; the times beside them do. Also the floor under every commit on this disk:
 * a bare two-row better-sqlite3 commit at WAL + FULL and NORMAL.
 *
 *   npx tsx bench/commits.ts [--steps 1000] [--cycles 200] [--task-bytes 0]
 *
 * `--task-bytes N`: the approval runs' task is N bytes instead of "go" (a real prompt), to show what
 * the rows a commit rewrites whole (the run row, the checkpoint's state, both holding the task) cost.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { DurableRunner } from '../src/durable/durable-runner.js';
import type { Model, ModelRequest, ModelStreamPart } from '../src/model/types.js';
import { openSqliteStore } from '../src/store/open-store.js';
import { decodeEvents } from '../src/store/queries/writes.js';
import type { Store } from '../src/store/index.js';
import type { Tool } from '../src/tool/index.js';
import { createPermissionEngine } from '../src/permission/index.js';
import { auditLogFromStore } from '../src/runtime/store-adapters.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** One `echo` call per turn until `n` results are in, then "done". */
function countingModel(n: number): Model {
  return {
    id: 'counting',
    provider: 'bench',
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
      const done = request.messages.filter((m) => m.role === 'tool').length;
      if (done >= n) {
        yield { type: 'text-delta', text: 'done' };
        yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
        return;
      }
      yield { type: 'tool-call', call: { id: `c${done}`, name: 'echo', input: { i: done } } };
      yield { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } };
    },
  } as Model;
}

const echo = (readOnly: boolean): Tool<{ i: number }> => ({
  name: 'echo',
  description: 'echo',
  inputSchema: z.object({ i: z.number() }),
  risk: 'LOW',
  readOnly,
  execute: async ({ i }) => `ok ${i}`,
});

// appendAudit: a permission decision's audit row committed on its own (the product's gate audits every decision).
const COMMITTING = ['createRun', 'write', 'saveInteraction', 'claimAnswer', 'claimRun', 'closeInteraction', 'appendAudit'] as const;

/**
 * The run's gate: `plain` decides without an audit log (allow-all for steps, the minimal gate's ask
 * for cycles); `audited` is the product's permission engine with its audit log in the store
 * (auditLogFromStore), as `sage run` and `sage serve` build it: every decision and answer is a row.
 */
type GateKind = 'plain' | 'audited';
const auditedGate = (store: Store, echo: 'allow' | 'ask') => () => createPermissionEngine({ rules: [{ rule: 'echo', behavior: echo }], audit: auditLogFromStore(store) });

async function countedStore(dir: string): Promise<{ store: Store; counts: Record<string, number>; total: () => number }> {
  const store = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'full' });
  const counts: Record<string, number> = {};
  for (const name of COMMITTING) {
    const original = (store[name] as (...a: unknown[]) => Promise<unknown>).bind(store);
    (store as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
      counts[name] = (counts[name] ?? 0) + 1;
      return original(...a);
    };
  }
  return { store, counts, total: () => Object.values(counts).reduce((a, b) => a + b, 0) };
}

/** A run that never waits (non-interactive, every call allowed): commits per step. */
async function perStep(
  steps: number,
  readOnly: boolean,
  gate: GateKind = 'plain',
): Promise<{ commitsPerStep: number; msPerStep: number; counts: Record<string, number>; writtenPerStep: number; rowBytesPerStep: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-commits-'));
  const { store, counts, total } = await countedStore(dir);
  const allow = { decide: async () => ({ behavior: 'allow' as const, reason: 'bench', source: 'default' as const }) };
  const runner = new DurableRunner({ store, runtime: { createModel: () => countingModel(steps), tools: [echo(readOnly)], createGate: gate === 'audited' ? auditedGate(store, 'allow') : () => allow as never } });
  await runner.open();
  const written = writtenBytes();
  const t = performance.now();
  const handle = await runner.start('go', { model: 'bench:counting', mode: 'non-interactive', autoResponse: 'allow', maxSteps: steps + 10 });
  const outcome = await handle.outcome;
  const ms = performance.now() - t;
  const writtenPerStep = (writtenBytes() - written) / outcome.stats.steps;
  if (outcome.status !== 'completed') throw new Error(`per-step run: ${outcome.status}`);
  await runner.close();
  const rowBytesPerStep = runBytes(join(dir, 'sage.db'), handle.runId) / outcome.stats.steps;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  // The run's creation and its final status are once per run, not per step.
  return { commitsPerStep: (total() - 2) / outcome.stats.steps, msPerStep: ms / outcome.stats.steps, counts, writtenPerStep, rowBytesPerStep };
}

/**
 * Every call asks. Released (idleSuspendMs 0): nobody waits in memory, each answer resumes the run
 * from the store. Held: the run waits in memory (as a server's does for 5 min), answers go to it live.
 */
async function perCycle(
  cycles: number,
  mode: 'released' | 'held' = 'released',
  gate: GateKind = 'plain',
): Promise<{ commitsPerCycle: number; msPerCycle: number; cpuMsPerCycle: number; counts: Record<string, number>; writtenPerCycle: number; devicePerCycle: number; rowBytesPerCycle: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-commits-'));
  const { store, counts, total } = await countedStore(dir);
  const runner = new DurableRunner({
    store,
    runtime: { createModel: () => countingModel(cycles), tools: [echo(false)], ...(gate === 'audited' ? { createGate: auditedGate(store, 'ask') } : {}) },
    idleSuspendMs: mode === 'released' ? 0 : 600_000,
  });
  await runner.open();
  const started = await runner.start(taskBytes > 0 ? 'x'.repeat(taskBytes) : 'go', { model: 'bench:counting', maxSteps: cycles + 10 });
  const waiting = async () => {
    for (;;) {
      const run = await store.getRun(started.runId);
      if (!run || run.status === 'completed' || run.pendingInteractionId) return run;
      await new Promise((r) => setImmediate(r));
    }
  };
  if (mode === 'released') await started.outcome;
  else await waiting();
  for (const k of Object.keys(counts)) delete counts[k];
  let done = 0;
  const rowsBefore = runBytes(join(dir, 'sage.db'), started.runId);
  const written = writtenBytes();
  const device = deviceBytes();
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (;;) {
    const run = mode === 'released' ? await store.getRun(started.runId) : await waiting();
    if (!run || run.status === 'completed') break;
    const id = run.pendingInteractionId;
    if (!id) throw new Error(`cycle: run is ${run.status} with nothing pending`);
    const answer = id.includes(':input:') ? { kind: 'input', text: '' } : { kind: 'confirm', confirmed: true, userId: 'bench' };
    const result = await runner.respond(id, answer);
    done++;
    if (mode === 'held') {
      if (id.includes(':input:')) await started.outcome;
      continue;
    }
    let handle = result.delivered === 'resumed' ? result.handle : runner.handle(started.runId);
    while (handle) {
      await handle.outcome;
      handle = runner.handle(started.runId);
    }
  }
  const ms = performance.now() - t;
  const cpuUsed = process.cpuUsage(cpu);
  const writtenPerCycle = (writtenBytes() - written) / done;
  const devicePerCycle = (deviceBytes() - device) / done;
  await runner.close();
  const rowBytesPerCycle = (runBytes(join(dir, 'sage.db'), started.runId) - rowsBefore) / done;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { commitsPerCycle: total() / done, msPerCycle: ms / done, cpuMsPerCycle: (cpuUsed.user + cpuUsed.system) / 1000 / done, counts, writtenPerCycle, devicePerCycle, rowBytesPerCycle };
}

/** Bytes this process handed to write() so far (/proc/self/io `wchar`: WAL frames, checkpoint copies, temp files). */
function writtenBytes(): number {
  return Number(/wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
}

/**
 * Bytes this process sent toward the disk so far (/proc/self/io `write_bytes`): whole 4 KiB pages of
 * the OS's cache, so a 1 KiB database page written alone (a checkpoint's scattered pages) counts 4 KiB.
 */
function deviceBytes(): number {
  return Number(/^write_bytes: (\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
}

/**
 * Bytes of every row a run owns (its data before page overhead), read on a connection of its own.
 * Events count as the rows they were before schema v6 batched a write's events into one row (run
 * id, seq, type, ISO time, data each), so the ratio keeps its meaning across v6 and v7.
 */
function runBytes(file: string, runId: string): number {
  const db = new Database(file, { readonly: true });
  // Decoded as the store reads them: since v7 a batch stores most times as numbers, counted here as
  // the ISO strings they stand for (the event's data, not its encoding).
  let total = 0;
  for (const row of db.prepare('SELECT events FROM run_events WHERE run_id = ?').all(runId) as { events: string }[]) {
    for (const e of decodeEvents(row.events, runId)) total += runId.length + String(e.seq).length + e.type.length + e.at.length + JSON.stringify(e.data ?? null).length;
  }
  for (const table of ['runs', 'run_checkpoints', 'run_messages', 'run_tool_history', 'tool_calls', 'interactions', 'run_options']) {
    const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => `coalesce(length(${c.name}),0)`);
    total += (db.prepare(`SELECT coalesce(sum(${cols.join('+')}),0) AS b FROM ${table} WHERE ${table === 'runs' ? 'id' : 'run_id'} = ?`).get(runId) as { b: number }).b;
  }
  db.close();
  return total;
}

/**
 * Times bare transactions on a fresh WAL database: each sample runs `commits` transactions, each
 * inserting `rows`. Returns the samples' wall times (ms, sorted) and the process CPU (user +
 * system, all threads) per sample.
 */
function timeCommits(o: { sync: 'FULL' | 'NORMAL'; pageSize?: number; rows: readonly string[]; commits: number; samples: number; warmup: number }): { sortedMs: number[]; cpuMs: number } {
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-commit-'));
  const db = new Database(join(dir, 'x.db'));
  if (o.pageSize) db.pragma(`page_size = ${o.pageSize}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${o.sync}`);
  db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const sample = () => {
    for (let c = 0; c < o.commits; c++) {
      db.exec('BEGIN IMMEDIATE');
      for (const row of o.rows) insert.run(row);
      db.exec('COMMIT');
    }
  };
  for (let i = 0; i < o.warmup; i++) sample();
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < o.samples; i++) {
    const t = performance.now();
    sample();
    times.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return { sortedMs: times.sort((a, b) => a - b), cpuMs: (cpu.user + cpu.system) / 1000 / o.samples };
}

/** p50/p90 (µs) of a bare two-row commit on this disk. */
function bareCommit(sync: 'FULL' | 'NORMAL', n = 2000): { p50: number; p90: number } {
  const payload = 'x'.repeat(1000);
  const { sortedMs } = timeCommits({ sync, rows: [payload, payload], commits: 1, samples: n, warmup: 0 });
  return { p50: sortedMs[Math.floor(n / 2)]! * 1000, p90: sortedMs[Math.floor(n * 0.9)]! * 1000 };
}

/**
 * The floor under issue 13's "CPU per cycle ≤ 0.5 ms at FULL": the process CPU of the cycle's two
 * commits alone, each a bare transaction carrying half of the row data a released cycle adds
 * (`rowBytes`), at Sage's settings (WAL, 512 B pages, FULL); no runtime, no other statement.
 */
function commitFloor(rowBytes: number, n = 2000): { cpuMsPerCycle: number; p50Ms: number } {
  const { sortedMs, cpuMs } = timeCommits({ sync: 'FULL', pageSize: 512, rows: ['x'.repeat(Math.round(rowBytes / 2))], commits: 2, samples: n, warmup: 100 });
  return { cpuMsPerCycle: cpuMs, p50Ms: sortedMs[Math.floor(n / 2)]! };
}

const steps = arg('steps', 1000);
const cycles = arg('cycles', 200);
const taskBytes = arg('task-bytes', 0);
const before = loadavg();
const step = await perStep(steps, false);
const readOnlyStep = await perStep(steps, true);
const cycle = await perCycle(cycles);
const heldCycle = await perCycle(cycles, 'held');
const auditedStep = await perStep(steps, false, 'audited');
const auditedCycle = await perCycle(cycles, 'held', 'audited');
const full = bareCommit('FULL');
const normal = bareCommit('NORMAL');
const floor = commitFloor(cycle.rowBytesPerCycle);

console.log(`Durable commits (SQLite WAL + synchronous FULL), load average ${before.map((l) => l.toFixed(2)).join(' ')}`);
console.log('| what | commits | ms (load-dependent) | by call |');
console.log('|---|---:|---:|---|');
console.log(`| per step, a tool that changes things (${steps} steps, never waits; the run's create and final write not counted) | ${step.commitsPerStep.toFixed(2)} | ${step.msPerStep.toFixed(2)} | ${JSON.stringify(step.counts)} |`);
console.log(`| per step, a read-only tool | ${readOnlyStep.commitsPerStep.toFixed(2)} | ${readOnlyStep.msPerStep.toFixed(2)} | ${JSON.stringify(readOnlyStep.counts)} |`);
console.log(`| per approval cycle (${cycles} cycles, released at every ask${taskBytes ? `, a ${taskBytes}-byte task` : ''}) | ${cycle.commitsPerCycle.toFixed(2)} | ${cycle.msPerCycle.toFixed(2)} | ${JSON.stringify(cycle.counts)} |`);
console.log(`| per approval cycle (${cycles} cycles, the run waits in memory, answered live) | ${heldCycle.commitsPerCycle.toFixed(2)} | ${heldCycle.msPerCycle.toFixed(2)} | ${JSON.stringify(heldCycle.counts)} |`);
console.log(`| per step, a tool that changes things, the permission engine auditing every decision (allowed by a rule) | ${auditedStep.commitsPerStep.toFixed(2)} | ${auditedStep.msPerStep.toFixed(2)} | ${JSON.stringify(auditedStep.counts)} |`);
console.log(`| per approval cycle, waiting in memory, the permission engine auditing every decision and answer (an ask rule) | ${auditedCycle.commitsPerCycle.toFixed(2)} | ${auditedCycle.msPerCycle.toFixed(2)} | ${JSON.stringify(auditedCycle.counts)} |`);
console.log(
  `Bytes written per approval cycle (released): ${Math.round(cycle.writtenPerCycle)} B handed to write() (WAL frames and checkpoints) for ${Math.round(cycle.rowBytesPerCycle)} B of row data added (${(cycle.writtenPerCycle / cycle.rowBytesPerCycle).toFixed(1)}×), ${Math.round(cycle.devicePerCycle)} B toward the disk in 4 KiB OS pages (write_bytes); in memory: ${Math.round(heldCycle.writtenPerCycle)} B for ${Math.round(heldCycle.rowBytesPerCycle)} B (${(heldCycle.writtenPerCycle / heldCycle.rowBytesPerCycle).toFixed(1)}×), ${Math.round(heldCycle.devicePerCycle)} B toward the disk.`,
);
console.log(
  `Bytes written per step (a run that never waits, a tool that changes things): ${Math.round(step.writtenPerStep)} B handed to write() for ${Math.round(step.rowBytesPerStep)} B of row data (${(step.writtenPerStep / step.rowBytesPerStep).toFixed(1)}×).`,
);
console.log(`CPU per approval cycle (load-dependent): released ${cycle.cpuMsPerCycle.toFixed(2)} ms, in memory ${heldCycle.cpuMsPerCycle.toFixed(2)} ms.`);
console.log(`Bare two-row commit on this disk: FULL p50 ${full.p50.toFixed(0)} µs, p90 ${full.p90.toFixed(0)} µs; NORMAL p50 ${normal.p50.toFixed(0)} µs, p90 ${normal.p90.toFixed(0)} µs.`);
console.log(`Floor of a released cycle's two commits (two bare FULL transactions carrying its ${cycle.rowBytesPerCycle.toFixed(0)} B of row data, WAL, 512 B pages, nothing else): CPU ${floor.cpuMsPerCycle.toFixed(3)} ms (user + system), wall p50 ${floor.p50Ms.toFixed(3)} ms; Sage's whole cycle: CPU ${cycle.cpuMsPerCycle.toFixed(2)} ms.`);

const goals = [
  { goal: 'at most one commit per step for a run that does not wait (value = commits/step)', value: step.commitsPerStep, met: step.commitsPerStep <= 1 },
  { goal: 'at most two commits per approval cycle, released at every ask (value = commits/cycle)', value: cycle.commitsPerCycle, met: cycle.commitsPerCycle <= 2 },
  { goal: 'at most two commits per approval cycle, waiting in memory (value = commits/cycle)', value: heldCycle.commitsPerCycle, met: heldCycle.commitsPerCycle <= 2 },
  { goal: 'at most one commit per step, the permission engine auditing (value = commits/step)', value: auditedStep.commitsPerStep, met: auditedStep.commitsPerStep <= 1 },
  { goal: 'at most two commits per approval cycle, the permission engine auditing (value = commits/cycle)', value: auditedCycle.commitsPerCycle, met: auditedCycle.commitsPerCycle <= 2 },
  { goal: 'bytes written per approval cycle within 4x the row data (value = ratio, released)', value: cycle.writtenPerCycle / cycle.rowBytesPerCycle, met: cycle.writtenPerCycle / cycle.rowBytesPerCycle <= 4 },
];
for (const g of goals) console.log(`Goal: ${g.goal}: ${g.met ? 'met' : 'MISSED'} (${g.value.toFixed(2)}).`);
console.log(`BENCH_RESULT ${JSON.stringify({ bench: 'commits', load: before, step, readOnlyStep, cycle, heldCycle, auditedStep, auditedCycle, bareCommitUs: { full, normal }, commitFloor: floor, goals })}`);
