import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { thisProcess } from './owner-process.js';
import { answerFor, appendedLines, scenarioRuntime, SCENARIO_LINES, writeScenario } from './test-support/scenario.js';

let dir: string;
let store: SqlStore;
let paths: ReturnType<typeof writeScenario>;
const runners: DurableRunner[] = [];
const runner = (options: Partial<ConstructorParameters<typeof DurableRunner>[0]> = {}) => {
  // A lease far longer than any test: only knowing the owner dead can free its runs in time.
  const r = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 600_000, leaseMs: 600_000, ...options });
  runners.push(r);
  return r;
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-dead-owner-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  paths = writeScenario(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A run held in memory at its first ask by runner `owner`, under a 10-minute lease. */
async function heldAtAsk(owner: DurableRunner) {
  await owner.open();
  const handle = await owner.start('write four lines', { model: paths.model, userId: 'alice' });
  const run = await until('the ask', async () => {
    const r = await store.getRun(handle.runId);
    return r?.pendingInteractionId ? r : undefined;
  });
  expect(run).toMatchObject({ status: 'running', owner: owner.instanceId });
  return { runId: handle.runId, ask: (await store.getInteraction(run.pendingInteractionId!))! };
}

/** The owner's process exits as a crash would: its loop stops writing, its row names a pid now gone. */
async function dies(owner: DurableRunner): Promise<void> {
  await owner.close({ suspend: false });
  const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => gone.once('exit', resolve));
  await store.registerOwner({ owner: owner.instanceId, ...thisProcess(), pid: gone.pid! });
}

describe('a run whose owner died on this host', () => {
  it('is taken over at once by recover (a starting server, sage runs recover), its lease still running', async () => {
    const owner = runner({ instanceId: 'owner-that-dies' });
    const { runId } = await heldAtAsk(owner);
    await dies(owner);
    const next = runner();
    expect((await next.recover()).resumed).toEqual([runId]);
    expect(await store.getRun(runId)).toMatchObject({ owner: next.instanceId });
  });

  it('is taken over by the process that answers it, and the approved tool runs there', async () => {
    const owner = runner({ instanceId: 'owner-that-dies' });
    const { runId, ask } = await heldAtAsk(owner);
    await dies(owner);
    const answering = runner();
    const result = await answering.respond(ask.id, answerFor(ask));
    expect(result.delivered).toBe('resumed');
    await until('the approved tool to run', async () => (appendedLines(paths.logPath).length > 0 ? true : undefined));
    expect(appendedLines(paths.logPath)).toEqual(SCENARIO_LINES.slice(0, 1));
    expect(await store.getRun(runId)).toMatchObject({ owner: answering.instanceId });
  });
});

describe('a run whose owner lives', () => {
  it('is not taken over: recover leaves it and an answer from elsewhere goes to the owner', async () => {
    const owner = runner({ instanceId: 'owner-alive' });
    const { runId, ask } = await heldAtAsk(owner);
    const other = runner();
    expect((await other.recover()).resumed).toEqual([]);
    expect((await other.respond(ask.id, answerFor(ask))).delivered).toBe('notified');
    await until('the approved tool to run', async () => (appendedLines(paths.logPath).length > 0 ? true : undefined));
    expect(appendedLines(paths.logPath)).toEqual(SCENARIO_LINES.slice(0, 1));
    // The owner drives it on to its next ask; the other runner never claimed it.
    await until('the next ask, under the same owner', async () => {
      const run = await store.getRun(runId);
      return run?.pendingInteractionId && run.pendingInteractionId !== ask.id && run.owner === owner.instanceId ? run : undefined;
    });
    expect(other.liveRunIds()).toEqual([]);
  });
});
