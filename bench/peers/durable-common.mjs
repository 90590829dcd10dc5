// Shared by the durable peers of bench/durable.ts (and read the same way by Sage's worker there):
// the SQLite durability of the table being measured, how many runs are in flight in the concurrent
// block, the per-cycle markers strace sees in the fsync pass, and wall + CPU time per cycle.
import { accessSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** `FULL` or `NORMAL`, from BENCH_SYNC (set by bench/durable.ts for each table); anything else is refused. */
export function durability() {
  const raw = (process.env.BENCH_SYNC ?? 'full').trim().toUpperCase();
  if (raw !== 'FULL' && raw !== 'NORMAL') throw new Error(`BENCH_SYNC must be full or normal, not ${process.env.BENCH_SYNC}`);
  return raw;
}

/** Runs in flight in the concurrent block (the goal is stated at 16). */
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

/**
 * The fsync pass: the same workload run again under `strace -f`, with a marker syscall (an access()
 * of a path that does not exist) before and after each cycle, so the parent counts the fsync and
 * fdatasync calls inside the cycles only. Its timings are not used: tracing slows every fsync.
 */
export const FSYNC_PASS = process.env.BENCH_FSYNC_PASS === '1';

export function mark(which) {
  if (!FSYNC_PASS) return;
  try {
    accessSync(`/.sage-bench-mark/${which}`);
  } catch {
    // it never exists: the syscall is the marker
  }
}

/**
 * Wall and CPU time of each cycle. CPU is the process's (user + system, all threads), so a store
 * that works on another thread is charged too; it is taken around the cycle alone, not the run's start.
 */
export class CycleMeter {
  times = [];
  cpuUs = 0;
  /** Call before the cycle; call what it returns after. Safe with cycles of several runs interleaved. */
  start() {
    mark('begin');
    const c = process.cpuUsage();
    const t = performance.now();
    return () => {
      const ms = performance.now() - t;
      const cpu = process.cpuUsage(c);
      this.times.push(ms);
      this.cpuUs += cpu.user + cpu.system;
      mark('end');
    };
  }
  /** p50, p99 (ms) and CPU ms per cycle. */
  summary() {
    const sorted = [...this.times].sort((a, b) => a - b);
    const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
    return { p50: pct(50), p99: pct(99), cpuMsPerCycle: this.cpuUs / 1000 / Math.max(1, sorted.length), cycles: sorted.length };
  }
}

/**
 * Drives `drive(meter?)` (one whole run: start, then its N cycles) `runs` times on each of
 * `concurrency` lanes at once; returns cycles per second of wall time (each run's start included).
 */
export async function inFlight(concurrency, runsPerLane, drive) {
  const meter = new CycleMeter();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async (_, lane) => {
    for (let r = 0; r < runsPerLane; r++) await drive(meter, `con-${lane}-${r}`);
  }));
  const ms = performance.now() - t0;
  return { concurrentPerSec: meter.times.length / (ms / 1000), concurrentP50: meter.summary().p50, concurrency };
}
