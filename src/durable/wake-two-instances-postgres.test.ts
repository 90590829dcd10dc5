import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../store/open-store.js';
import type { InteractionRecord } from '../store/index.js';
import type { SqlStore } from '../store/sql-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../store/test-support/postgres-test-db.js';
import { DurableRunner } from './durable-runner.js';
import { answerFor, scenarioRuntime, writeScenario } from './test-support/scenario.js';

/**
 * Answers from another instance, on Postgres: instance A (a real process) drives runs waiting in memory for their
 * first ask; instance B (this process, its own pool and LISTEN connection) accepts the answers. A
 * must resume each run itself — by B's NOTIFY, or, when no push arrives (B died before sending it,
 * A's LISTEN connection was down), by its own look in the store. "Resumed" is read from the store:
 * the request is marked consumed once A's rebuilt loop took the answer.
 */
const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const schema = testSchemaName('wake');
const NOTIFIED = 100;
const SILENT = 20;
const LISTEN_DOWN = 10;
const runIds = Array.from({ length: NOTIFIED + SILENT + LISTEN_DOWN }, (_, i) => `run_wake_${i}`);
let dir = '';
let driver = '';
let storeB: SqlStore;
let a: ChildProcess | undefined;
let b: DurableRunner;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-wake-pg-'));
  writeScenario(dir);
  await (await openPostgresStore(TEST_DATABASE_URL, { schema, max: 1 })).close();
  driver = join(repo, 'node_modules', '.cache', 'sage-tests', `wake-driver-${process.pid}.mjs`);
  mkdirSync(dirname(driver), { recursive: true });
  buildSync({ entryPoints: [join(here, 'test-support', 'crash-driver.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: driver, external: ['better-sqlite3', 'pg'], logLevel: 'error' });
  storeB = await openPostgresStore(TEST_DATABASE_URL, { schema });
  // A: starts every run and holds it at its first ask, in memory (idle release after an hour).
  a = spawn(process.execPath, [driver, JSON.stringify({ url: TEST_DATABASE_URL, schema, dir, hold: runIds, leaseMs: 30_000 })], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  a.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((res, rej) => {
    a!.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && res());
    a!.on('close', (code) => rej(new Error(`instance A exited (${code}): ${stderr}`)));
  });
  b = await new DurableRunner({ store: storeB, runtime: scenarioRuntime(join(dir, 'appended.log')), instanceId: 'instance-b', leaseMs: 30_000, idleSuspendMs: 3_600_000 }).open();
}, 120_000);

afterAll(async () => {
  a?.kill('SIGKILL');
  await b?.close({ suspend: false });
  await storeB?.close();
  await dropSchema(schema);
  rmSync(dir, { recursive: true, force: true });
  rmSync(driver, { force: true });
});

async function firstAsk(runId: string): Promise<InteractionRecord> {
  const [pending] = await storeB.listInteractions({ runId, status: ['pending'] });
  expect(pending, `run ${runId} waits for its first ask`).toBeDefined();
  expect(await storeB.getRun(runId)).toMatchObject({ status: 'running', owner: 'instance-a' });
  return pending!;
}

/** Ms until the answer was taken by a resumed loop (the request marked consumed); undefined if never within 10 s. */
async function resumedWithin(interactionId: string, since: number): Promise<number | undefined> {
  while (Date.now() - since < 10_000) {
    if ((await storeB.getInteraction(interactionId))?.consumed) return Date.now() - since;
    await new Promise((r) => setTimeout(r, 5));
  }
  return undefined;
}

const summary = (ms: number[]) => {
  const sorted = [...ms].sort((x, y) => x - y);
  return `n=${sorted.length} p50=${sorted[Math.floor(sorted.length / 2)]} ms max=${sorted.at(-1)} ms`;
};

describe('an answer accepted by instance B for a run instance A drives', () => {
  it(`resumes the run in ${NOTIFIED} rounds out of ${NOTIFIED} (B notifies A)`, async () => {
    const times: number[] = [];
    const stalled: string[] = [];
    for (const runId of runIds.slice(0, NOTIFIED)) {
      const ask = await firstAsk(runId);
      const t0 = Date.now();
      const result = await b.respond(ask.id, answerFor(ask));
      expect(result.delivered).toBe('notified');
      const ms = await resumedWithin(ask.id, t0);
      if (ms === undefined) stalled.push(runId);
      else times.push(ms);
    }
    console.log(`[wake] Postgres, B answers, A resumes: ${summary(times)}`);
    expect(stalled).toEqual([]);
  }, 180_000);

  it(`resumes the run when no wake is ever sent (the answering process died after its commit): ${SILENT} rounds`, async () => {
    const times: number[] = [];
    const stalled: string[] = [];
    for (const runId of runIds.slice(NOTIFIED, NOTIFIED + SILENT)) {
      const ask = await firstAsk(runId);
      const t0 = Date.now();
      // Only the compare-and-set: no publish follows, as if B were killed right after the commit.
      await storeB.claimAnswer(ask.id, { requestId: ask.id, kind: 'confirm', confirmed: true, userId: 'tester', respondedAt: new Date().toISOString() });
      const ms = await resumedWithin(ask.id, t0);
      if (ms === undefined) stalled.push(runId);
      else times.push(ms);
    }
    console.log(`[wake] Postgres, no NOTIFY (A's poll): ${summary(times)}`);
    expect(stalled).toEqual([]);
  }, 120_000);

  it(`resumes the run when the answer lands while A's LISTEN connection is down: ${LISTEN_DOWN} rounds`, async () => {
    const times: number[] = [];
    const stalled: string[] = [];
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      for (const runId of runIds.slice(NOTIFIED + SILENT)) {
        const ask = await firstAsk(runId);
        // Every LISTEN session of this schema is ended (A's and B's); B's NOTIFY then reaches nobody.
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [`sage-listen sage_${schema}`]);
        const t0 = Date.now();
        await b.respond(ask.id, answerFor(ask));
        const ms = await resumedWithin(ask.id, t0);
        if (ms === undefined) stalled.push(runId);
        else times.push(ms);
      }
    } finally {
      await admin.end();
    }
    console.log(`[wake] Postgres, LISTEN cut before the answer: ${summary(times)}`);
    expect(stalled).toEqual([]);
  }, 120_000);
});
