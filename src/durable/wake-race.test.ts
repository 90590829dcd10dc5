import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { answerFor, appendedLines, scenarioRuntime, SCENARIO_LINES, writeScenario } from './test-support/scenario.js';
import { driveToEnd } from './test-support/drive-to-end.js';

/**
 * The races behind the two-instance hang, made deterministic: instance B drives (or is rebuilding)
 * a run, and an answer lands through instance C, which wakes B. Both share one SQLite file, so the
 * wake goes through the same in-process hub that LISTEN/NOTIFY feeds on Postgres.
 */
let dir: string;
let storeB: SqlStore;
let storeC: SqlStore;
let paths: ReturnType<typeof writeScenario>;
const runners: DurableRunner[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-wake-'));
  storeB = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'normal' });
  storeC = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'normal' });
  paths = writeScenario(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await storeB.close();
  await storeC.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = (store: Store, instanceId: string) => {
  const r = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), instanceId, leaseMs: 60_000, idleSuspendMs: 0, flushDelayMs: 1 });
  runners.push(r);
  return r.open();
};

/** Replaces one store method; `around` gets the original. */
function intercept(store: Store, name: keyof Store, around: (original: (...args: unknown[]) => Promise<unknown>, ...args: unknown[]) => Promise<unknown>): void {
  const original = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
  (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => around(original, ...args);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`hung: ${what}`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function expectFinishedOnce(store: Store, runId: string): Promise<void> {
  expect(await store.getRun(runId)).toMatchObject({ status: 'completed', owner: null });
  expect(appendedLines(paths.logPath)).toEqual(SCENARIO_LINES);
  const events = await store.readEvents(runId, { limit: 100_000 });
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
}

describe('a wake racing a rebuild', () => {
  it('joins the rebuild in progress when the wake arrives between claim and live loop (never two loops for one run)', async () => {
    const b = await open(storeB, 'instance-b');
    const c = await open(storeC, 'instance-c');
    const first = await b.start('write four lines', { model: paths.model });
    expect((await withTimeout(first.outcome, 5_000, 'suspend')).status).toBe('suspended');
    const pending = (await storeC.listInteractions({ runId: first.runId, status: ['pending'] }))[0];

    // B claims the run and is rebuilding it (checkpoint load held) when C stores the answer.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let loads = 0;
    intercept(storeB, 'loadCheckpoint', async (original, runId) => {
      if (loads++ === 0) await held;
      return original(runId);
    });
    const rebuilding = b.resume(first.runId);
    await waitFor(async () => (await storeC.getRun(first.runId))?.owner === 'instance-b');
    const delivered = await c.respond(pending!.id, answerFor(pending!));
    expect(delivered.delivered).toBe('notified');
    // B's own respond path and its maintenance join the same rebuild too.
    expect(b.resume(first.runId)).toBe(b.resume(first.runId));
    release();
    const handle = await rebuilding;
    expect(loads).toBe(1); // one rebuild: the wake did not claim and drive the run a second time

    await withTimeout(driveToEnd(b, storeB, handle.runId), 10_000, 'drive to end').catch(async (e) => {
      console.log(JSON.stringify(await storeB.getRun(handle.runId)), JSON.stringify(await storeB.listInteractions({ runId: handle.runId })), b.liveRunIds(), JSON.stringify((await storeB.readEvents(handle.runId)).map((e) => [e.seq, e.type])));
      throw e;
    });
    await expectFinishedOnce(storeB, handle.runId);
  });

  it('resumes when the wake lands while the rebuilt loop is saving its ask again (abort during the save)', async () => {
    const b = await open(storeB, 'instance-b');
    const c = await open(storeC, 'instance-c');
    const first = await b.start('write four lines', { model: paths.model });
    expect((await withTimeout(first.outcome, 5_000, 'suspend')).status).toBe('suspended');
    const pending = (await storeC.listInteractions({ runId: first.runId, status: ['pending'] }))[0];

    // The rebuilt loop re-saves the pending ask; it reads "pending", and before the save returns
    // the answer is committed through C and its wake suspends the live loop.
    let armed = true;
    intercept(storeB, 'saveInteraction', async (original, request, fence) => {
      const prior = (await original(request, fence)) as { status: string } | undefined;
      if (armed && (request as { id: string }).id === pending!.id) {
        armed = false;
        expect(prior?.status).toBe('pending');
        expect((await c.respond(pending!.id, answerFor(pending!))).delivered).toBe('notified');
      }
      return prior;
    });
    await b.resume(first.runId);
    await withTimeout(waitFor(async () => !armed), 5_000, 'the armed save');
    // Without the fix the broker never saw the abort: the run stayed running, owned by B, forever.
    await withTimeout(
      waitFor(async () => (await storeB.listInteractions({ runId: first.runId, status: ['pending'] })).some((i) => i.id !== pending!.id)),
      5_000,
      'the run moving past the answered ask',
    );
    await withTimeout(driveToEnd(b, storeB, first.runId), 10_000, 'drive to end');
    await expectFinishedOnce(storeB, first.runId);
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 2));
}
