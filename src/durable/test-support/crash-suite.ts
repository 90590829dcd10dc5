import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../store/index.js';
import { DurableRunner } from '../durable-runner.js';
import { driveToEnd } from './drive-to-end.js';
import { appendedLines, scenarioRuntime, SCENARIO_LINES, writeScenario } from './scenario.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');

/** What a crash test case needs from a backend: where the child writes, and the same store for the parent. */
export interface CrashBackend {
  name: string;
  /** A fresh database for one case; `args` go to the child driver (db path, or url + schema). */
  prepare(dir: string): Promise<{ args: Record<string, unknown>; open(): Promise<Store>; cleanup(): Promise<void> }>;
}

interface ChildResult {
  signal: NodeJS.Signals | null;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The driver is bundled once with esbuild so each child starts in a fraction of the time
 * `node --import tsx` takes; it is the same source, run by a plain `node` child process.
 */
function bundleDriver(): string {
  const out = join(repo, 'node_modules', '.cache', 'sage-tests', `crash-driver-${process.pid}.mjs`);
  mkdirSync(dirname(out), { recursive: true });
  buildSync({
    entryPoints: [join(here, 'crash-driver.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: out,
    external: ['better-sqlite3', 'pg'],
    logLevel: 'error',
  });
  return out;
}

function runChild(driver: string, args: Record<string, unknown>, env: Record<string, string> = {}): Promise<ChildResult> {
  return new Promise((resolveChild, reject) => {
    const child = spawn(process.execPath, [driver, JSON.stringify(args)], { cwd: repo, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolveChild({ code, signal, stdout, stderr }));
  });
}

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * Kill -9 at every durable boundary of the scenario run, then recover in another process and
 * answer what is pending: every run finishes, every side effect happened exactly once or was
 * reported interrupted, and no interaction was lost or answered twice.
 */
export function describeCrashRecovery(backend: CrashBackend): void {
  describe(`crash recovery: ${backend.name}`, () => {
    let driver = '';
    let root = '';
    let boundaries = 0;

    beforeAll(() => {
      driver = bundleDriver();
      root = mkdtempSync(join(tmpdir(), `sage-crash-${backend.name.toLowerCase()}-`));
    });
    afterAll(() => {
      rmSync(root, { recursive: true, force: true });
      rmSync(driver, { force: true });
    });

    const runCase = async (name: string, crash: { crashAfter?: number; afterAppend?: string }) => {
      const dir = join(root, name);
      mkdirSync(dir, { recursive: true });
      const paths = writeScenario(dir);
      const db = await backend.prepare(dir);
      const runId = `run_${name}`;
      try {
        const child = await runChild(driver, { ...db.args, dir, runId, crashAfter: crash.crashAfter, leaseMs: 150 }, crash.afterAppend ? { SAGE_TEST_CRASH_AFTER_APPEND: crash.afterAppend } : {});
        const store = await db.open();
        const runner = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 0, leaseMs: 150, instanceId: 'recoverer' });
        try {
          await driveToEnd(runner, store, runId);
          return { child, ...(await inspect(store, runId, paths.logPath)) };
        } finally {
          await runner.close({ suspend: false });
          await store.close();
        }
      } finally {
        await db.cleanup();
      }
    };

    it('runs the scenario to the end in a child and counts its durable boundaries', async () => {
      const result = await runCase('clean', {});
      expect(result.child.stderr).toBe('');
      expect(result.child.signal).toBeNull();
      const printed = JSON.parse(result.child.stdout) as { commits: number; status: string };
      expect(printed.status).toBe('completed');
      boundaries = printed.commits;
      expect(boundaries).toBeGreaterThan(20);
      expect(result.lines).toEqual(SCENARIO_LINES);
    });

    it('survives kill -9 at every boundary: finishes, no side effect repeated, no answer lost or given twice', async () => {
      expect(boundaries).toBeGreaterThan(0);
      const points = Array.from({ length: boundaries }, (_, i) => i + 1);
      const outcomes: string[] = [];
      await inParallel(points, 4, async (n) => {
        const result = await runCase(`kill-${n}`, { crashAfter: n });
        expect(result.child.signal, `boundary ${n}: ${result.child.stderr}`).toBe('SIGKILL');
        expect(result.status, `boundary ${n}`).toBe('completed');
        for (const line of SCENARIO_LINES) {
          const count = result.lines.filter((l) => l === line).length;
          const call = result.appendCalls.find((c) => c.line === line);
          // Exactly once when its result was recorded; at most once, and reported, when interrupted.
          if (call?.status === 'interrupted') expect(count, `boundary ${n}, line ${line}`).toBeLessThanOrEqual(1);
          else expect(count, `boundary ${n}, line ${line}`).toBe(1);
        }
        expect(result.pending, `boundary ${n}`).toEqual([]);
        expect(result.answeredTwice, `boundary ${n}`).toEqual([]);
        expect(result.seqsContiguous, `boundary ${n}`).toBe(true);
        outcomes.push(`${n}:${result.appendCalls.map((c) => c.status[0]).join('')}`);
      });
      expect(outcomes).toHaveLength(boundaries);
    }, 120_000);

    it('reports a call killed between its side effect and its result as interrupted, and never runs it again', async () => {
      const result = await runCase('in-tool', { afterAppend: 'b' });
      expect(result.child.signal).toBe('SIGKILL');
      expect(result.status).toBe('completed');
      expect(result.lines).toEqual(['a', 'b', 'c', 'd']);
      expect(result.appendCalls.find((c) => c.line === 'b')).toMatchObject({ status: 'interrupted' });
      expect(result.interruptedResults).toHaveLength(1);
      expect(result.interruptedResults[0]).toMatch(/interrupted by a restart/);
    });
  });
}

async function inspect(store: Store, runId: string, logPath: string) {
  const run = await store.getRun(runId);
  const events = await store.readEvents(runId, { limit: 100_000 });
  const interactions = await store.listInteractions({ runId, limit: 1000 });
  const calls = await store.listToolCalls(runId);
  const answeredEvents = new Map<string, number>();
  for (const e of events) {
    if (e.type === 'interaction.answered') answeredEvents.set(e.data.interactionId, (answeredEvents.get(e.data.interactionId) ?? 0) + 1);
  }
  return {
    status: run?.status,
    lines: appendedLines(logPath),
    appendCalls: calls.filter((c) => c.toolName === 'AppendLine').map((c) => ({ line: (c.input as { line: string }).line, status: c.status })),
    pending: interactions.filter((i) => i.status === 'pending').map((i) => i.id),
    // The store allows one answer per request; its log must not show two either.
    answeredTwice: [...answeredEvents].filter(([, n]) => n > 1).map(([id]) => id),
    seqsContiguous: events.every((e, i) => e.seq === i + 1),
    interruptedResults: events
      .filter((e) => e.type === 'tool.completed' && e.data.isError && /interrupted/.test(e.data.content))
      .map((e) => (e.data as { content: string }).content),
  };
}
