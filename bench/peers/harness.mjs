// Shared by every benchmark process (Sage's and the peers'): the mock's decision, the warm-up, the
// timed block and the one JSON line the parent (bench/loop.ts) reads. No dependencies.
import { performance } from 'node:perf_hooks';

/** Settings passed by bench/loop.ts through the environment. */
export function settings() {
  const n = Number(process.env.BENCH_N ?? 10);
  const steps = Number(process.env.BENCH_STEPS ?? 10_000);
  const warmup = Number(process.env.BENCH_WARMUP ?? 30);
  return { n, steps, warmup, runs: Math.ceil(steps / (n + 1)) };
}

/**
 * Runs `runOnce(runIndex)` `warmup` times, then times `runs` sequential runs of N tool turns + 1 final
 * turn each. `runOnce` must resolve to the number of model turns (steps) the run took, so a harness
 * that silently stops early is caught instead of looking fast. Prints one line:
 * `BENCH_RESULT {"name",...,"usPerStep","cpuUsPerStep"}`. Wall time is the figure; the process's CPU
 * time (user + system, all threads) is printed beside it because it moves less when other tenants
 * load the machine.
 */
export async function measure(name, runOnce, extra = {}) {
  const { n, steps, warmup, runs } = settings();
  const expected = n + 1;
  for (let w = 0; w < warmup; w++) {
    const got = await runOnce(-1 - w);
    if (got !== expected) throw new Error(`${name}: a run took ${got} steps, expected ${expected}`);
  }
  globalThis.gc?.();
  let total = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = 0; r < runs; r++) total += await runOnce(r);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  if (total !== runs * expected) throw new Error(`${name}: ${total} steps, expected ${runs * expected}`);
  const result = { name, n, runs, steps: total, warmup, ms, usPerStep: (ms * 1000) / total, cpuUsPerStep: (cpu.user + cpu.system) / total, ...extra };
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
  return result;
}

/** The shared mock decision: `done` tool results so far → the next tool call, or the final text. */
export function decide(done, n) {
  return done < n ? { kind: 'call', id: `call_${done}`, input: { i: done } } : { kind: 'text', text: 'done' };
}

/** Reads an installed package's version (for the report). */
export async function versionOf(pkg) {
  try {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const { readFileSync } = await import('node:fs');
    const { dirname, join } = await import('node:path');
    // Resolve the package's entry, then walk up to its package.json.
    let dir = dirname(require.resolve(pkg));
    for (let i = 0; i < 6; i++) {
      try {
        const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        if (json.name === pkg) return json.version;
      } catch {}
      dir = dirname(dir);
    }
  } catch {}
  return 'unknown';
}
