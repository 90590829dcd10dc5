import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { scenarioRuntime } from './test-support/scenario.js';

// idleRunSuspendMs 0 (a server's default): a run whose task is done is released at its ask for the
// next message, while a run waiting on a permission stays in memory for its idleSuspendMs.

let dir: string;
let store: SqlStore;
let model: string;
const runners: DurableRunner[] = [];
const logOf = (runId: string) => join(dir, `${runId}.log`);
const runner = () => {
  const r = new DurableRunner({ store, runtime: scenarioRuntime(logOf), idleSuspendMs: 3_600_000, idleRunSuspendMs: 0, leaseMs: 5_000 });
  runners.push(r);
  return r;
};

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never: ${what}`);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-idle-release-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  // A side effect behind a permission ask, an answer; then (after the next message) a second answer.
  writeFileSync(join(dir, 'script.json'), JSON.stringify({ turns: [{ toolCalls: [{ name: 'AppendLine', input: { line: 'a' } }] }, { text: 'Done.' }, { text: 'Again.' }] }));
  model = `scripted:${join(dir, 'script.json')}`;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('idleRunSuspendMs 0', () => {
  it('keeps a run waiting on a permission in memory, releases it once its task is done, and a next message resumes it from the store', async () => {
    const r = runner();
    const handle = await r.start('append a line', { model, userId: 'alice' });
    writeFileSync(logOf(handle.runId), '');
    const permission = `${handle.runId}:call_0_0:permission`;
    await until(async () => (await store.getRun(handle.runId))?.pendingInteractionId === permission, 'the permission ask');
    // An approval wait is not an idle run: it stays live (idleSuspendMs is an hour).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.liveRunIds()).toEqual([handle.runId]);

    await r.respond(permission, { kind: 'confirm', confirmed: true, userId: 'bob' });
    // The task is done: the run asks for its next message and is released at that ask.
    expect((await handle.outcome).status).toBe('suspended');
    const idle = await store.getRun(handle.runId);
    expect(idle).toMatchObject({ status: 'idle', owner: null, pendingInteractionId: expect.stringMatching(/:input:\d+$/) });
    const ask = idle!.pendingInteractionId!;
    expect(r.liveRunIds()).toEqual([]);
    expect(readFileSync(logOf(handle.runId), 'utf8')).toBe('a\n');

    // The next message resumes it from the store; it answers and is released again.
    const delivery = await r.respond(ask, { kind: 'input', text: 'and again' });
    expect(delivery.delivered).toBe('resumed');
    if (delivery.delivered === 'resumed') expect((await delivery.handle.outcome).status).toBe('suspended');
    const again = await store.getRun(handle.runId);
    expect(again).toMatchObject({ status: 'idle', owner: null, pendingInteractionId: expect.stringMatching(/:input:\d+$/) });
    expect(again!.pendingInteractionId).not.toBe(ask);
    expect(r.liveRunIds()).toEqual([]);
    const events = await store.readEvents(handle.runId);
    expect(events.filter((e) => e.type === 'message.completed').map((e) => (e.data as { text: string }).text).filter(Boolean)).toEqual(['Done.', 'Again.']);
    // The tool ran once, not again on the resume.
    expect(readFileSync(logOf(handle.runId), 'utf8')).toBe('a\n');
  });
});
