import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../errors/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { scenarioRuntime } from './test-support/scenario.js';

// Runs waiting in memory, and what releases them to the store: maxWaitingInMemory, beyond
// which the longest-waiting go first; and idleRunSuspendMs 0, which releases a run whose task is done
// at its ask for the next message. An answer resumes a released run from the store.

let dir: string;
let store: SqlStore;
let model: string;
const runners: DurableRunner[] = [];
const logOf = (runId: string) => join(dir, `${runId}.log`);
const runner = (release: { maxWaitingInMemory?: number; idleRunSuspendMs?: number }) => {
  // The idle release far away: only what `release` names releases runs here.
  const r = new DurableRunner({ store, runtime: scenarioRuntime(logOf), idleSuspendMs: 3_600_000, ...release, leaseMs: 5_000 });
  runners.push(r);
  return r;
};

/** Polls (bounded) until `check` holds; the releases happen on the event loop after the asks. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never: ${what}`);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-waiting-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  // One side effect behind a permission ask, then an answer (and the ask for the next message); a
  // second answer after a next message.
  writeFileSync(join(dir, 'script.json'), JSON.stringify({ turns: [{ toolCalls: [{ name: 'AppendLine', input: { line: 'a' } }] }, { text: 'Done.' }, { text: 'Again.' }] }));
  model = `scripted:${join(dir, 'script.json')}`;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('maxWaitingInMemory', () => {
  it('with N + k runs waiting keeps the N whose wait began last in memory; an answered released run resumes from the store and runs its tool once', async () => {
    const cap = 3;
    const r = runner({ maxWaitingInMemory: cap });
    const ids: string[] = [];
    // One after the other, each waiting on its permission before the next starts: a known order.
    for (let i = 0; i < cap + 2; i++) {
      const handle = await r.start(`append ${i}`, { model, userId: 'alice' });
      writeFileSync(logOf(handle.runId), '');
      ids.push(handle.runId);
      await until(async () => (await store.getRun(handle.runId))?.pendingInteractionId === `${handle.runId}:call_0_0:permission`, `run ${i} asks`);
      await until(() => r.liveRunIds().length <= cap, `at most ${cap} live after run ${i}`);
    }
    expect(r.liveRunIds().sort()).toEqual(ids.slice(2).sort());
    for (const id of ids.slice(0, 2)) {
      // Released as the idle release does: suspended, nobody's, the ask still pending in the store.
      expect(await store.getRun(id)).toMatchObject({ status: 'suspended', owner: null, pendingInteractionId: `${id}:call_0_0:permission` });
      expect((await store.readEvents(id)).find((e) => e.type === 'run.suspended')?.data).toMatchObject({ reason: expect.stringContaining('maxWaitingInMemory') });
    }

    // Answering the longest-released run resumes it here from the store.
    const answered = await r.respond(`${ids[0]}:call_0_0:permission`, { kind: 'confirm', confirmed: true, userId: 'bob' });
    expect(answered.delivered).toBe('resumed');
    // It runs the tool and then waits for the next message: now the one that began to wait last, so
    // the cap releases the longest-waiting live one (ids[2]) instead.
    await until(async () => /:input:\d+$/.test((await store.getRun(ids[0]!))?.pendingInteractionId ?? ''), 'the resumed run asks for the next message');
    await until(() => r.liveRunIds().length <= cap, 'the cap again');
    expect(r.liveRunIds().sort()).toEqual([ids[0]!, ids[3]!, ids[4]!].sort());
    expect(await store.getRun(ids[2]!)).toMatchObject({ status: 'suspended', owner: null });
    expect(readFileSync(logOf(ids[0]!), 'utf8')).toBe('a\n');
    const calls = await store.listToolCalls(ids[0]!);
    expect(calls.filter((c) => c.toolName === 'AppendLine').map((c) => c.status)).toEqual(['completed']);
    expect((await store.readEvents(ids[0]!)).filter((e) => e.type === 'tool.started')).toHaveLength(1);

    // A run still in memory is answered live, and its tool runs once too.
    expect((await r.respond(`${ids[4]}:call_0_0:permission`, { kind: 'confirm', confirmed: true, userId: 'bob' })).delivered).toBe('live');
    await until(async () => /:input:\d+$/.test((await store.getRun(ids[4]!))?.pendingInteractionId ?? ''), 'the live run asks for the next message');
    expect(readFileSync(logOf(ids[4]!), 'utf8')).toBe('a\n');
    // The released ones never ran their tool.
    for (const id of [ids[1]!, ids[2]!]) expect(readFileSync(logOf(id), 'utf8')).toBe('');
  });

  it('0 keeps no waiting run in memory; a count that is not a whole number of 0 or more is refused', async () => {
    const r = runner({ maxWaitingInMemory: 0 });
    const handle = await r.start('append', { model, userId: 'alice' });
    writeFileSync(logOf(handle.runId), '');
    expect((await handle.outcome).status).toBe('suspended');
    expect(r.liveRunIds()).toEqual([]);
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => new DurableRunner({ store, runtime: scenarioRuntime(logOf), maxWaitingInMemory: bad })).toThrow(InvalidInputError);
    }
    expect(() => new DurableRunner({ store, runtime: scenarioRuntime(logOf), maxWaitingInMemory: -1 })).toThrow('maxWaitingInMemory must be 0 or more (got -1)');
  });
});

describe('idleRunSuspendMs 0', () => {
  it('keeps a run waiting on a permission in memory, releases it once its task is done, and a next message resumes it from the store', async () => {
    const r = runner({ idleRunSuspendMs: 0 });
    const handle = await r.start('append a line', { model, userId: 'alice' });
    writeFileSync(logOf(handle.runId), '');
    const permission = `${handle.runId}:call_0_0:permission`;
    await until(async () => (await store.getRun(handle.runId))?.pendingInteractionId === permission, 'the permission ask');
    // An approval wait is not an idle run: it stays live (idleSuspendMs is an hour).
    // eslint-disable-next-line sage/no-fixed-sleep -- negative check: a release that does not happen has no event to wait for
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
