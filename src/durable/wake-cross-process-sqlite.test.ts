import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { answerFor, scenarioRuntime, writeScenario } from './test-support/scenario.js';

/**
 * Answers from another process, on SQLite: a live runner (a server, here this process) holds runs waiting in
 * memory; another process answers them in the same database file (as `sage respond` does). SQLite
 * has no cross-process push, so the live runner must find each answer itself (its poll of the
 * store, gated by PRAGMA data_version) and resume the run — not 5 minutes later at idle release.
 */
const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const ROUNDS = 100;
let dir = '';
let driver = '';
let store: SqlStore;
let live: DurableRunner;
let child: ChildProcess;
let replies: AsyncIterator<string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-wake-sqlite-'));
  const paths = writeScenario(dir);
  store = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'normal' });
  live = await new DurableRunner({ store, runtime: scenarioRuntime((id) => join(dir, `${id}.log`)), instanceId: 'server', idleSuspendMs: 3_600_000, flushDelayMs: 1 }).open();
  for (let i = 0; i < ROUNDS; i++) await live.start('write four lines', { runId: `run_sq_${i}`, model: paths.model });
  driver = join(repo, 'node_modules', '.cache', 'sage-tests', `respond-driver-${process.pid}.mjs`);
  mkdirSync(dirname(driver), { recursive: true });
  buildSync({ entryPoints: [join(here, 'test-support', 'respond-driver.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: driver, external: ['better-sqlite3', 'pg'], logLevel: 'error' });
  child = spawn(process.execPath, [driver, JSON.stringify({ db: join(dir, 'sage.db'), dir })], { cwd: repo, stdio: ['pipe', 'pipe', 'inherit'] });
  replies = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  expect((await replies.next()).value).toBe('ready');
}, 120_000);

afterAll(async () => {
  child?.stdin?.end();
  child?.kill('SIGKILL');
  await live?.close({ suspend: false });
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(driver, { force: true });
});

describe('an answer from another process to a run a live runner holds (SQLite)', () => {
  it(`resumes the run in ${ROUNDS} rounds out of ${ROUNDS}, in the live runner`, async () => {
    const times: number[] = [];
    const stalled: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const runId = `run_sq_${i}`;
      let [ask] = await store.listInteractions({ runId, status: ['pending'] });
      for (let tries = 0; !ask && tries < 500; tries++) {
        await new Promise((r) => setTimeout(r, 10));
        [ask] = await store.listInteractions({ runId, status: ['pending'] });
      }
      expect(ask, `run ${runId} waits for its first ask`).toBeDefined();
      expect(live.liveRunIds()).toContain(runId);
      const t0 = Date.now();
      child.stdin!.write(`${JSON.stringify({ id: ask!.id, answer: answerFor(ask!) })}\n`);
      const reply = JSON.parse((await replies.next()).value as string) as { delivered?: string; error?: string };
      // The other process stored it and could only try to tell the owner: no push crosses processes.
      expect(reply).toEqual({ id: ask!.id, delivered: 'notified' });
      let ms: number | undefined;
      while (Date.now() - t0 < 10_000) {
        if ((await store.getInteraction(ask!.id))?.consumed) {
          ms = Date.now() - t0;
          break;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      if (ms === undefined) stalled.push(runId);
      else times.push(ms);
    }
    const sorted = [...times].sort((x, y) => x - y);
    console.log(`[wake] SQLite, another process answers, the live runner resumes: n=${sorted.length} p50=${sorted[Math.floor(sorted.length / 2)]} ms max=${sorted.at(-1)} ms`);
    expect(stalled).toEqual([]);
    // Resumed where it was live, not by the answering process.
    for (let i = 0; i < ROUNDS; i++) expect((await store.getRun(`run_sq_${i}`))?.owner).toBe('server');
  }, 180_000);
});
