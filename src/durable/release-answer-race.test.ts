import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateResponse } from '../interaction/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { answerFor, scenarioRuntime, writeScenario } from './test-support/scenario.js';

/**
 * The release of a run and an answer from elsewhere, on SQLite (no push between connections). When
 * the request was committed before the write that releases the run (the run waited in memory), an
 * answer can land in between, from a process that saw the run owned and could only send a wake
 * that never arrives: the releasing runner must look, and resume the run. A request committed with
 * the release itself cannot be answered before it: the answerer finds the run released and resumes it.
 */
let dir: string;
let store: SqlStore;
let other: SqlStore;
let paths: ReturnType<typeof writeScenario>;
let runner: DurableRunner | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-release-race-'));
  store = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'normal' });
  other = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'normal' });
  paths = writeScenario(dir);
});
afterEach(async () => {
  await runner?.close({ suspend: false });
  runner = undefined;
  await other.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A runner that never polls the store for answers: only its own steps can find one. */
const open = (idleSuspendMs: number) =>
  new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), instanceId: 'here', leaseMs: 60_000, idleSuspendMs, flushDelayMs: 1, wakePollMs: 0 }).open();

async function firstAsk(runId: string) {
  for (let tries = 0; tries < 500; tries++) {
    const [ask] = await other.listInteractions({ runId, status: ['pending'] });
    if (ask) return ask;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`run ${runId} never asked`);
}

describe('an answer and the release of its run', () => {
  it('answered through another connection while the run waited in memory, then released: the runner finds the answer and resumes the run', async () => {
    runner = await open(3_600_000);
    const handle = await runner.start('write four lines', { model: paths.model });
    const ask = await firstAsk(handle.runId);
    // Stored by another connection, as a process that saw the run owned here would (its wake is lost).
    await other.claimAnswer(ask.id, validateResponse(ask.request, { ...answerFor(ask), requestId: ask.id }));
    expect((await runner.suspend(handle.runId))?.status).toBe('suspended');
    // Resumed here by the release's look at its request: the answer is consumed and the tool ran.
    for (let tries = 0; tries < 500 && !(await other.getInteraction(ask.id))?.consumed; tries++) await new Promise((r) => setTimeout(r, 5));
    expect(await other.getInteraction(ask.id)).toMatchObject({ status: 'answered', consumed: true });
    expect(readFileSync(paths.logPath, 'utf8').split('\n')[0]).toBe('a');
  });

  it('released with its request in one commit: an answer through another runner resumes the run there', async () => {
    runner = await open(0);
    const handle = await runner.start('write four lines', { model: paths.model });
    expect((await handle.outcome).status).toBe('suspended');
    const ask = await firstAsk(handle.runId);
    expect(await other.getRun(handle.runId)).toMatchObject({ status: 'suspended', owner: null, pendingInteractionId: ask.id });
    const there = await new DurableRunner({ store: other, runtime: scenarioRuntime(paths.logPath), instanceId: 'there', idleSuspendMs: 0, flushDelayMs: 1, wakePollMs: 0 }).open();
    try {
      const result = await there.respond(ask.id, answerFor(ask));
      expect(result.delivered).toBe('resumed');
      if (result.delivered === 'resumed') await result.handle.outcome;
      expect(await other.getInteraction(ask.id)).toMatchObject({ status: 'answered', consumed: true });
      expect(readFileSync(paths.logPath, 'utf8').split('\n')[0]).toBe('a');
    } finally {
      await there.close();
    }
  });
});
