import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelError } from '../errors/index.js';
import { loadScriptedModel } from '../model/scripted-model.js';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { eventually } from '../test-support/eventually.js';
import { RunRebuildError } from './errors.js';
import type { DurableRuntime } from './runtime.js';
import { scenarioRuntime, writeScenario } from './test-support/scenario.js';

/**
 * A process that resumes stored runs (a server opening, `sage runs recover`) meets
 * a run it cannot rebuild — its scripted model is now disabled, its provider key is missing, its
 * stored options do not validate. That run is marked failed with the reason, reported, and the
 * process goes on serving the others.
 */
let dir: string;
let store: SqlStore;
let paths: ReturnType<typeof writeScenario>;
const runners: DurableRunner[] = [];

/** The scenario's runtime on a "server" where scripted models under /disabled are off and no Anthropic key is set. */
function serverRuntime(): DurableRuntime {
  const base = scenarioRuntime((id) => join(dir, `${id}.log`));
  return {
    ...base,
    createModel: (spec, run) => {
      if (spec.startsWith('scripted:/disabled/')) throw new ModelError('scripted models are disabled on this server (start it with --allow-scripted)', { code: 'scripted_disabled' });
      if (spec.startsWith('anthropic:')) throw new ModelError('ANTHROPIC_API_KEY is not set', { code: 'missing_api_key' });
      if (spec.startsWith('scripted:')) return loadScriptedModel(spec.slice('scripted:'.length));
      return base.createModel(spec, run);
    },
  };
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-rebuild-'));
  store = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'normal' });
  paths = writeScenario(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const create = (id: string, options: Record<string, unknown>, owner: { id: string; leaseMs: number } | null = null) =>
  store.createRun({ id, userId: 'alice', sessionId: id, channel: 'web', task: 'write four lines', options }, owner);

describe('a stored run that cannot be rebuilt', () => {
  it('is marked failed with the reason while recover() resumes every other run', async () => {
    await create('run_good_1', { model: paths.model });
    await create('run_good_2', { model: paths.model });
    await create('run_disabled', { model: 'scripted:/disabled/turns.json' });
    await create('run_no_key', { model: 'anthropic:claude-sonnet-4-5' });
    await create('run_bad_options', { model: paths.model, frobnicate: true });
    await create('run_bad_type', { model: 42 });
    // A run a dead instance drove, waiting on an ask: taken over by the sweep, then found unbuildable.
    await create('run_orphan', { model: 'anthropic:claude-sonnet-4-5' }, { id: 'dead-instance', leaseMs: 1 });
    await store.saveInteraction({ id: 'run_orphan:call_0_0:permission', runId: 'run_orphan', kind: 'confirm', title: 'Allow?', createdAt: new Date().toISOString() } as never);
    await eventually(async () => (await store.listOrphanCandidates(Date.now(), 100)).includes('run_orphan'), { what: "the dead instance's lease to run out" });

    const reported: RunRebuildError[] = [];
    const runner = new DurableRunner({ store, runtime: serverRuntime(), idleSuspendMs: 3_600_000, onRunFailed: (e) => reported.push(e) });
    runners.push(runner);
    await runner.open();
    const result = await runner.recover();

    expect(result.resumed.sort()).toEqual(['run_good_1', 'run_good_2']);
    for (const id of ['run_good_1', 'run_good_2']) {
      await waitFor(async () => (await store.listInteractions({ runId: id, status: ['pending'] })).length > 0);
      expect(await store.getRun(id)).toMatchObject({ status: 'running', error: null });
    }
    const expected: Record<string, RegExp> = {
      run_disabled: /its model cannot be built: scripted models are disabled on this server/,
      run_no_key: /its model cannot be built: ANTHROPIC_API_KEY is not set/,
      run_bad_options: /its stored options do not validate: .*frobnicate/,
      run_bad_type: /its stored options do not validate: .*model/,
      run_orphan: /ANTHROPIC_API_KEY is not set/,
    };
    for (const [id, reason] of Object.entries(expected)) {
      const run = await store.getRun(id);
      expect(run, id).toMatchObject({ status: 'failed', owner: null, error: { code: 'run_rebuild_failed' } });
      expect(run!.error!.message).toMatch(new RegExp(`^Run ${id} cannot be resumed: `));
      expect(run!.error!.message).toMatch(reason);
      // The log says so too, once, as the run's last event.
      const events = await store.readEvents(id);
      expect(events.filter((e) => e.type === 'run.failed')).toEqual([expect.objectContaining({ data: run!.error })]);
      expect(events.at(-1)!.type).toBe('run.failed');
    }
    // Nothing of the failed runs stays answerable.
    expect(await store.getInteraction('run_orphan:call_0_0:permission')).toMatchObject({ status: 'cancelled', reason: 'the run failed (run_rebuild_failed)' });
    expect(reported.map((e) => e.runId).sort()).toEqual(Object.keys(expected).sort());
    expect(reported.every((e) => RunRebuildError.isInstance(e) && e.code === 'run_rebuild_failed')).toBe(true);

    // A later sweep leaves them alone: failed is final.
    expect((await runner.recover()).resumed).toEqual([]);
    expect(reported).toHaveLength(Object.keys(expected).length);
  });

  it('fails a resume() of such a run with RunRebuildError, marks it failed, and never leaves it claimed', async () => {
    await create('run_susp', { model: 'anthropic:claude-sonnet-4-5' });
    const runner = new DurableRunner({ store, runtime: serverRuntime(), onRunFailed: () => {} });
    runners.push(runner);
    await runner.open();
    const resuming = runner.resume('run_susp');
    await expect(resuming).rejects.toBeInstanceOf(RunRebuildError);
    await expect(resuming).rejects.toMatchObject({ code: 'run_rebuild_failed', runId: 'run_susp', part: 'model' });
    expect(await store.getRun('run_susp')).toMatchObject({ status: 'failed', owner: null, leaseExpiresAt: null });
    expect(runner.liveRunIds()).toEqual([]);
  });

  it('reports on stderr when no handler is given', async () => {
    await create('run_stderr', { model: 'scripted:/disabled/x.json' });
    const runner = new DurableRunner({ store, runtime: serverRuntime() });
    runners.push(runner);
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      await runner.recover();
    } finally {
      process.stderr.write = original;
    }
    expect(written.join('')).toMatch(/^sage: Run run_stderr cannot be resumed: its model cannot be built: scripted models are disabled on this server .* It was marked failed\.\n$/);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
