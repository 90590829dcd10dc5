import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InteractionAlreadyAnsweredError, InteractionCancelledError, InvalidResponseError } from '../interaction/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { eventually, untilPast } from '../test-support/eventually.js';
import { RunFinishedError } from './errors.js';
import { driveToEnd } from './test-support/drive-to-end.js';
import { answerFor, appendedLines, scenarioRuntime, SCENARIO_LINES, writeScenario } from './test-support/scenario.js';

let dir: string;
let store: SqlStore;
let paths: ReturnType<typeof writeScenario>;
const runners: DurableRunner[] = [];
const runner = (options: Partial<ConstructorParameters<typeof DurableRunner>[0]> = {}) => {
  const r = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 0, leaseMs: 2000, ...options });
  runners.push(r);
  return r;
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-durable-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  paths = writeScenario(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('durable runs', () => {
  it('suspends at each ask, resumes from any runner on the answer, and runs every side effect once', async () => {
    const first = runner();
    const handle = await first.start('write four lines', { model: paths.model, userId: 'alice' });
    const suspended = await handle.outcome;
    expect(suspended.status).toBe('suspended');
    expect(suspended.pendingInteractionId).toBe(`${handle.runId}:call_0_0:permission`);
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'suspended', owner: null, pendingInteractionId: suspended.pendingInteractionId });
    expect(await store.getInteraction(suspended.pendingInteractionId!)).toMatchObject({ status: 'pending', kind: 'confirm' });

    // Another "process" answers; the run resumes there.
    await driveToEnd(runner(), store, handle.runId);
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'completed', finalText: 'All four lines are written.', owner: null });
    expect(appendedLines(paths.logPath)).toEqual(SCENARIO_LINES);

    const events = await store.readEvents(handle.runId);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const interactions = await store.listInteractions({ runId: handle.runId });
    expect(interactions.length).toBe(6); // 4 permissions, 1 question, 1 next-message input
    expect(interactions.every((i) => i.status === 'answered' && i.consumed)).toBe(true);
    for (const i of interactions) expect(events.filter((e) => e.type === 'interaction.answered' && e.data.interactionId === i.id)).toHaveLength(1);
    // The question and the next permission ask are pending together once, so one suspension covers both.
    const suspensions = events.filter((e) => e.type === 'run.suspended').length;
    expect(suspensions).toBeGreaterThanOrEqual(5);
    expect(events.filter((e) => e.type === 'run.resumed')).toHaveLength(suspensions);
    expect(events.filter((e) => e.type === 'tool.started').map((e) => (e.data as { input: { line?: string } }).input.line).filter(Boolean)).toEqual(SCENARIO_LINES);
    const calls = await store.listToolCalls(handle.runId);
    expect(calls.filter((c) => c.toolName === 'AppendLine').map((c) => c.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });

  it('refuses a second answer with who answered and when, and an answer that does not fit the request', async () => {
    const handle = await runner().start('go', { model: paths.model });
    const { pendingInteractionId: id } = await handle.outcome;
    const other = runner();
    await expect(other.respond(id!, { kind: 'input', text: 'x' })).rejects.toBeInstanceOf(InvalidResponseError);
    const first = await other.respond(id!, { kind: 'confirm', confirmed: true, userId: 'bob' });
    expect(first.delivered).toBe('resumed');
    const second = runner().respond(id!, { kind: 'confirm', confirmed: false, userId: 'carol' });
    await expect(second).rejects.toBeInstanceOf(InteractionAlreadyAnsweredError);
    await expect(second).rejects.toMatchObject({ answeredBy: 'bob', answeredAt: first.response.respondedAt });
  });

  it('two runners answering a released run at once: one resumes it with one commit, the other is told who answered, the tool runs once', async () => {
    const handle = await runner().start('write four lines', { model: paths.model });
    const { pendingInteractionId: id } = await handle.outcome;
    const commits: string[] = [];
    const write = store.write.bind(store);
    store.write = async (w) => {
      await write(w);
      commits.push([w.claim ? 'claim' : '', w.toolIntent ? 'intent' : ''].filter(Boolean).join('+'));
    };
    const [bob, carol] = [runner(), runner()];
    const answers = await Promise.allSettled([
      bob.respond(id!, { kind: 'confirm', confirmed: true, userId: 'bob' }),
      carol.respond(id!, { kind: 'confirm', confirmed: true, userId: 'carol' }),
    ]);
    const won = answers.filter((a) => a.status === 'fulfilled');
    const lost = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(InteractionAlreadyAnsweredError);
    const winner = (await store.getInteraction(id!))!.answeredBy;
    expect(lost[0]!.reason).toMatchObject({ answeredBy: winner });
    // The winner's first commit claimed the run, recorded the answer and the tool's intent together.
    expect(commits[0]).toBe('claim+intent');
    const resumed = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<DurableRunner['respond']>>>).value;
    expect(resumed.delivered).toBe('resumed');
    if (resumed.delivered === 'resumed') await resumed.handle.outcome;
    expect(appendedLines(paths.logPath)).toEqual(['a']);
    const events = await store.readEvents(handle.runId);
    expect(events.filter((e) => e.type === 'interaction.answered' && e.data.interactionId === id)).toHaveLength(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });

  it('delivers an answer straight to a run waiting in this process', async () => {
    const here = runner({ idleSuspendMs: 60_000 });
    const handle = await here.start('go', { model: paths.model });
    let pending;
    for (let i = 0; i < 100 && !(pending = (await store.listInteractions({ runId: handle.runId, status: ['pending'] }))[0]); i++) await new Promise((r) => setTimeout(r, 10));
    const result = await here.respond(pending!.id, answerFor(pending!));
    expect(result.delivered).toBe('live');
    await eventually(() => appendedLines(paths.logPath).length > 0, { what: 'the allowed line' });
    expect(appendedLines(paths.logPath)).toEqual(['a']);
    here.handle(handle.runId)!.run.cancel();
    expect((await handle.outcome).status).toBe('cancelled');
  });

  it('records a live answer with the call it allows, in one commit, and answers the caller once that is durable', async () => {
    const here = runner({ idleSuspendMs: 60_000 });
    const handle = await here.start('go', { model: paths.model });
    let pending;
    for (let i = 0; i < 100 && !(pending = (await store.listInteractions({ runId: handle.runId, status: ['pending'] }))[0]); i++) await new Promise((r) => setTimeout(r, 10));
    const writes: { answers: number; intent: boolean }[] = [];
    const write = store.write.bind(store);
    store.write = async (w) => {
      await write(w);
      writes.push({ answers: w.answers?.length ?? 0, intent: w.toolIntent !== undefined });
    };
    let claims = 0;
    const claimAnswer = store.claimAnswer.bind(store);
    store.claimAnswer = (...a) => (claims++, claimAnswer(...a));
    const result = await here.respond(pending!.id, answerFor(pending!));
    expect(result.delivered).toBe('live');
    // Durable when the caller hears back: answered, consumed, in the same write as the intent.
    expect(await store.getInteraction(pending!.id)).toMatchObject({ status: 'answered', consumed: true });
    expect(claims).toBe(0);
    expect(writes[0]).toEqual({ answers: 1, intent: true });
    here.handle(handle.runId)!.run.cancel();
    await handle.outcome;
  });

  it('a live answer that lost to one stored first is refused with who answered, and the run goes on with the winner', async () => {
    const here = runner({ idleSuspendMs: 60_000 });
    const handle = await here.start('write four lines', { model: paths.model });
    let pending;
    for (let i = 0; i < 100 && !(pending = (await store.listInteractions({ runId: handle.runId, status: ['pending'] }))[0]); i++) await new Promise((r) => setTimeout(r, 10));
    const elsewhere = await openSqliteStore(join(dir, 'sage.db'));
    try {
      // Another process stores a denial first; the loop here has not heard of it and takes an allow.
      await elsewhere.claimAnswer(pending!.id, { requestId: pending!.id, kind: 'confirm', confirmed: false, userId: 'carol', respondedAt: new Date().toISOString() });
      await expect(here.respond(pending!.id, { kind: 'confirm', confirmed: true, userId: 'bob' })).rejects.toBeInstanceOf(InteractionAlreadyAnsweredError);
    } finally {
      await elsewhere.close();
    }
    // The run is driven again here and reads carol's denial: the line is never written.
    for (let i = 0; i < 200; i++) {
      const events = await store.readEvents(handle.runId);
      if (events.some((e) => e.type === 'tool.completed')) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(appendedLines(paths.logPath)).toEqual([]);
    const events = await store.readEvents(handle.runId);
    const answered = events.filter((e) => e.type === 'interaction.answered' && e.data.interactionId === pending!.id);
    expect(answered).toHaveLength(1);
    expect(answered[0]!.data).toMatchObject({ response: { confirmed: false, userId: 'carol' } });
    expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ isError: true });
    here.handle(handle.runId)?.run.cancel();
  });

  it('cancels a suspended run in the store, so a late answer is refused as stale and resume as finished', async () => {
    const r = runner();
    const handle = await r.start('go', { model: paths.model });
    const { pendingInteractionId: id } = await handle.outcome;
    expect(await r.cancel(handle.runId, 'changed my mind')).toBe('stored');
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'cancelled' });
    await expect(r.respond(id!, { kind: 'confirm', confirmed: true })).rejects.toBeInstanceOf(InteractionCancelledError);
    await expect(r.resume(handle.runId)).rejects.toBeInstanceOf(RunFinishedError);
    const events = await store.readEvents(handle.runId);
    expect(events[events.length - 1]).toMatchObject({ type: 'run.cancelled', seq: events.length, data: { reason: 'changed my mind' } });
  });

  it('applies the timeout behaviour to an expired request and goes on: a permission is denied', async () => {
    const r = runner();
    const handle = await r.start('go', { model: paths.model, interactionTimeoutMs: 30 });
    const { pendingInteractionId: id } = await handle.outcome;
    await untilPast((await store.getInteraction(id!))?.expiresAt);
    const recovered = await r.recover();
    expect(recovered.expired).toContain(id);
    expect(recovered.resumed).toContain(handle.runId);
    await r.handle(handle.runId)?.outcome;
    const events = await store.readEvents(handle.runId);
    expect(events.find((e) => e.type === 'interaction.expired')).toMatchObject({ data: { interactionId: id } });
    const result = events.find((e) => e.type === 'tool.completed');
    expect(result?.data).toMatchObject({ isError: true });
    expect((result?.data as { content: string }).content).toMatch(/no one answered within/);
    expect(appendedLines(paths.logPath)).toEqual([]);
  });

  it('writes checkpoints whose size does not grow with the conversation', async () => {
    const handle = await runner().start('go', { model: paths.model });
    await handle.outcome;
    const sizes: number[] = [];
    const rowSize = async () => {
      const rows = await store.driver.query<{ n: number }>('SELECT length(state) AS n FROM run_checkpoints WHERE run_id = ?', [handle.runId]);
      return Number(rows[0]!.n);
    };
    sizes.push(await rowSize());
    await driveToEnd(runner(), store, handle.runId);
    sizes.push(await rowSize());
    expect(sizes[1]!).toBeLessThan(sizes[0]! * 2);
    const messages = await store.driver.query<{ n: number }>('SELECT COUNT(*) AS n FROM run_messages WHERE run_id = ?', [handle.runId]);
    expect(Number(messages[0]!.n)).toBeGreaterThan(8);
  });
});

/**
 * DurableRunner.respond(id, answer, known): the caller's fresh read of the request is used instead
 * of a second one (a server route reads it to check access). A record gone stale meanwhile — the
 * request answered elsewhere after it was read — must not let a second answer through.
 */
describe('respond with the request as the caller read it', () => {
  it('does not read the request again', async () => {
    const handle = await runner().start('write four lines', { model: paths.model });
    const { pendingInteractionId: id } = await handle.outcome;
    const known = (await store.getInteraction(id!))!;
    const reads: string[] = [];
    const getInteraction = store.getInteraction.bind(store);
    store.getInteraction = (interactionId) => (reads.push(interactionId), getInteraction(interactionId));
    const driver = runner();
    const result = await driver.respond(id!, { kind: 'confirm', confirmed: true, userId: 'bob' }, known);
    expect(result.delivered).toBe('resumed');
    expect(reads).not.toContain(id);
    await (result.delivered === 'resumed' ? result.handle.outcome : undefined);
    expect(appendedLines(paths.logPath)).toEqual(['a']);
  });

  it('refuses a second answer given with a record read before the first one, naming who answered', async () => {
    const handle = await runner().start('write four lines', { model: paths.model });
    const { pendingInteractionId: id } = await handle.outcome;
    const stale = (await store.getInteraction(id!))!;
    expect(stale.status).toBe('pending');
    const first = await runner().respond(id!, { kind: 'confirm', confirmed: true, userId: 'bob' });
    await (first.delivered === 'resumed' ? first.handle.outcome : undefined);
    const second = runner().respond(id!, { kind: 'confirm', confirmed: false, userId: 'carol' }, stale);
    await expect(second).rejects.toBeInstanceOf(InteractionAlreadyAnsweredError);
    await expect(second).rejects.toMatchObject({ answeredBy: 'bob' });
    // The tool ran once, for the first answer.
    expect(appendedLines(paths.logPath)).toEqual(['a']);
    expect(await store.getInteraction(id!)).toMatchObject({ status: 'answered', answeredBy: 'bob' });
  });
});
