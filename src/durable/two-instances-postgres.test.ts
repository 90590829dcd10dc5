import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../store/test-support/postgres-test-db.js';
import { DurableRunner } from './durable-runner.js';
import { answerFor, appendedLines, scenarioRuntime, SCENARIO_LINES, writeScenario } from './test-support/scenario.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const schema = testSchemaName('inst');
let dir = '';
let driver = '';
let storeB: SqlStore;
let storeC: SqlStore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-instances-'));
  writeScenario(dir);
  await (await openPostgresStore(TEST_DATABASE_URL, { schema, max: 1 })).close();
  driver = join(repo, 'node_modules', '.cache', 'sage-tests', `instance-driver-${process.pid}.mjs`);
  mkdirSync(dirname(driver), { recursive: true });
  buildSync({ entryPoints: [join(here, 'test-support', 'crash-driver.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: driver, external: ['better-sqlite3', 'pg'], logLevel: 'error' });
  // B and C are two more instances: separate pools, separate LISTEN connections.
  storeB = await openPostgresStore(TEST_DATABASE_URL, { schema });
  storeC = await openPostgresStore(TEST_DATABASE_URL, { schema });
});
afterAll(async () => {
  await storeB?.close();
  await storeC?.close();
  await dropSchema(schema);
  rmSync(dir, { recursive: true, force: true });
  rmSync(driver, { force: true });
});

describe('several instances on Postgres', () => {
  it('takes over a killed instance\'s runs, and a response posted to either instance resumes the run', async () => {
    const runIds = ['run_inst_1', 'run_inst_2', 'run_inst_3'];
    // Instance A: a real process that starts the runs and holds them at their first ask.
    const a = spawn(process.execPath, [driver, JSON.stringify({ url: TEST_DATABASE_URL, schema, dir, runId: 'unused', hold: runIds, leaseMs: 400 })], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    a.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((res, rej) => {
      a.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && res());
      a.on('close', (code) => rej(new Error(`instance A exited (${code}): ${stderr}`)));
    });
    for (const id of runIds) expect(await storeB.getRun(id)).toMatchObject({ status: 'running', owner: 'instance-a' });
    a.kill('SIGKILL');
    await new Promise((r) => a.once('close', r));

    const logPath = join(dir, 'appended.log');
    const b = await new DurableRunner({ store: storeB, runtime: scenarioRuntime(logPath), instanceId: 'instance-b', leaseMs: 400, idleSuspendMs: 3_600_000, autoRecover: true, maintenanceIntervalMs: 50 }).open();
    const c = await new DurableRunner({ store: storeC, runtime: scenarioRuntime(logPath), instanceId: 'instance-c', leaseMs: 400, idleSuspendMs: 3_600_000 }).open();
    try {
      // B's maintenance notices the expired leases and takes the runs over from their checkpoints.
      await until(async () => runIds.every((id) => b.liveRunIds().includes(id)));
      for (const id of runIds) expect(await storeC.getRun(id)).toMatchObject({ status: 'running', owner: 'instance-b' });

      // Answer alternately through B (which drives the runs) and C (which does not: it notifies B).
      const deliveries = new Set<string>();
      let turn = 0;
      await until(async () => {
        const runs = await Promise.all(runIds.map((id) => storeC.getRun(id)));
        if (runs.every((r) => r?.status === 'completed')) return true;
        for (const pending of await storeC.listInteractions({ status: ['pending'], limit: 100 })) {
          const via = turn++ % 2 === 0 ? b : c;
          try {
            const result = await via.respond(pending.id, answerFor(pending));
            deliveries.add(`${via === b ? 'b' : 'c'}:${result.delivered}`);
          } catch (error) {
            // A request may end between the listing and the answer (the run moved on): fine, not twice.
            if ((error as { code?: string }).code !== 'interaction_already_answered') throw error;
          }
        }
        return false;
      }, 30_000).catch(async (error: unknown) => {
        // Say where each run is stuck: status, owner, who drives it here, its requests.
        for (const id of runIds) {
          const run = await storeC.getRun(id);
          const asks = (await storeC.listInteractions({ runId: id })).map((i) => `${i.id.split(':').slice(1).join(':')}=${i.status}${i.consumed ? '/used' : ''}`);
          console.error(id, run?.status, run?.owner, b.liveRunIds().includes(id) ? 'live in b' : '', c.liveRunIds().includes(id) ? 'live in c' : '', asks.join(' '), [...deliveries].join(' '));
        }
        throw error;
      });
      expect(deliveries).toContain('b:live');
      expect(deliveries).toContain('c:notified');
      for (const id of runIds) {
        const interactions = await storeC.listInteractions({ runId: id });
        expect(interactions.every((i) => i.status === 'answered')).toBe(true);
        const events = await storeC.readEvents(id, { limit: 100_000 });
        expect(events.every((e, i) => e.seq === i + 1)).toBe(true);
      }
      // Three runs, four appends each, none repeated.
      const lines = appendedLines(logPath);
      for (const line of SCENARIO_LINES) expect(lines.filter((l) => l === line)).toHaveLength(3);
    } finally {
      await b.close({ suspend: false });
      await c.close({ suspend: false });
    }
  }, 60_000);
});

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}
