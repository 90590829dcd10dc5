import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { scenarioRuntime } from './test-support/scenario.js';

let dir: string;
let store: SqlStore;
let model: string;
const runners: DurableRunner[] = [];
const runner = (idleSuspendMs: number) => {
  const r = new DurableRunner({ store, runtime: scenarioRuntime(join(dir, 'appended.log')), idleSuspendMs, leaseMs: 2000 });
  runners.push(r);
  return r;
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-idle-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  writeFileSync(join(dir, 'appended.log'), '');
  writeFileSync(join(dir, 'script.json'), JSON.stringify({ turns: [{ text: 'First answer.' }, { text: 'Second answer.' }] }));
  model = `scripted:${join(dir, 'script.json')}`;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a durable run waiting for its next message', () => {
  it('is idle in the store while it waits in memory, and stays idle (released) after the idle timeout', async () => {
    const handle = await runner(60_000).start('answer', { model, userId: 'alice' });
    const waiting = async () => {
      for (let i = 0; i < 500; i++) {
        const run = await store.getRun(handle.runId);
        if (run?.status === 'idle') return run;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error('never idle');
    };
    const inMemory = await waiting();
    expect(inMemory).toMatchObject({ owner: expect.any(String), pendingInteractionId: `${handle.runId}:input:1`, finishedAt: null });
    // Released (the idle timeout, or a shutdown): same status, no owner, the ask still named.
    await runners[0]!.suspend(handle.runId, 'no answer within 300 s');
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'idle', owner: null, pendingInteractionId: `${handle.runId}:input:1` });
    const events = await store.readEvents(handle.runId);
    expect(events[0]?.type).toBe('run.started');
    expect(events.find((e) => e.type === 'run.suspended')).toMatchObject({ data: { interactionId: `${handle.runId}:input:1` } });
  });

  it('a released idle run answered by another process is resumed by the sweep, runs, and is idle again', async () => {
    const handle = await runner(0).start('answer', { model, userId: 'alice' });
    expect((await handle.outcome).status).toBe('suspended');
    const askId = `${handle.runId}:input:1`;
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'idle', owner: null, pendingInteractionId: askId });
    // Another process stores the answer and dies before resuming the run.
    await store.claimAnswer(askId, { requestId: askId, kind: 'input', text: 'and then?', respondedAt: new Date().toISOString() });
    const sweeper = runner(0);
    const { resumed } = await sweeper.recover();
    expect(resumed).toContain(handle.runId);
    await sweeper.handle(handle.runId)?.outcome;
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'idle', owner: null, pendingInteractionId: `${handle.runId}:input:2` });
    const events = await store.readEvents(handle.runId);
    expect(events.filter((e) => e.type === 'run.started')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'message.completed').map((e) => (e.data as { text: string }).text)).toEqual(['First answer.', 'Second answer.']);
  });
});
