import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startAskingRun, startHarness, type Harness } from './test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Starts a web run that answers once and then waits for the next message. */
async function startIdleRun(turns: unknown[] = [{ text: 'All done.' }, { text: 'More done.' }]): Promise<string> {
  const { body } = await h.api('alice', 'POST', '/runs', { task: 'do the task', model: h.script(turns) });
  const runId = body.id as string;
  await eventually(async () => ((await h.api('alice', 'GET', `/runs/${runId}`)).body.status === 'idle' ? true : undefined));
  return runId;
}

describe('a run that answered and waits for the next message', () => {
  test('is idle, waiting for a message, in the store, GET /runs/:id and the list; a message makes it work again', async () => {
    const runId = await startIdleRun();
    const ask = (await h.store.listInteractions({ runId, status: ['pending'] }))[0]!;
    // The store itself says so (no server-side patching of the answer).
    expect(await h.store.getRun(runId)).toMatchObject({ status: 'idle', pendingInteractionId: ask.id, finishedAt: null });
    const one = await h.api('alice', 'GET', `/runs/${runId}`);
    expect(one.body).toMatchObject({ status: 'idle', waitingFor: 'message', pendingInteractionId: ask.id, finishedAt: null });
    const list = await h.api('alice', 'GET', '/runs?status=idle');
    expect(list.body.runs.find((r: { id: string }) => r.id === runId)).toMatchObject({ status: 'idle', waitingFor: 'message' });

    await h.api('alice', 'POST', `/runs/${runId}/messages`, { text: 'and now?' });
    const next = await eventually(async () => {
      const log = await h.store.readEvents(runId);
      return log.filter((e) => e.type === 'message.completed').length === 2 ? true : undefined;
    });
    expect(next).toBe(true);
    const again = await eventually(async () => {
      const r = (await h.api('alice', 'GET', `/runs/${runId}`)).body;
      return r.status === 'idle' && r.pendingInteractionId !== ask.id ? r : undefined;
    });
    expect(again).toMatchObject({ waitingFor: 'message' });
  });

  test('a run blocked on an approval is running (in memory), waiting for approval, with its request named by the store', async () => {
    const { runId, interactionId } = await startAskingRun(h);
    expect(await h.store.getRun(runId)).toMatchObject({ status: 'running', pendingInteractionId: interactionId });
    const one = await h.api('alice', 'GET', `/runs/${runId}`);
    expect(one.body).toMatchObject({ status: 'running', waitingFor: 'approval', pendingInteractionId: interactionId });
    // Answered: it works again and waits for nothing until its next ask.
    await h.api('alice', 'POST', `/interactions/${encodeURIComponent(interactionId)}/respond`, { kind: 'confirm', confirmed: false });
    const after = await eventually(async () => {
      const r = (await h.api('alice', 'GET', `/runs/${runId}`)).body;
      return r.pendingInteractionId !== interactionId ? r : undefined;
    });
    expect(after.waitingFor === null || after.waitingFor === 'message').toBe(true);
    await h.api('alice', 'POST', `/runs/${runId}/cancel`);
  });

  test('the stream of a web run starts with run.started', async () => {
    const runId = await startIdleRun();
    const events = await h.store.readEvents(runId);
    expect(events[0]).toMatchObject({ seq: 1, type: 'run.started', data: { task: 'do the task' } });
    expect(events.filter((e) => e.type === 'run.started')).toHaveLength(1);
    await h.api('alice', 'POST', `/runs/${runId}/close`);
  });
});

describe('POST /runs/:id/close', () => {
  test('ends an idle run as completed with its last answer, its next-message ask closed; a second close is 409', async () => {
    const runId = await startIdleRun();
    const ask = (await h.store.listInteractions({ runId, status: ['pending'] }))[0]!;
    const closed = await h.api('alice', 'POST', `/runs/${runId}/close`);
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ id: runId, status: 'completed', waitingFor: null, pendingInteractionId: null, finalText: 'All done.' });
    expect(closed.body.finishedAt).not.toBeNull();
    expect(await h.store.getInteraction(ask.id)).toMatchObject({ status: 'answered', answeredBy: 'alice' });
    expect((await h.store.readEvents(runId)).at(-2)).toMatchObject({ type: 'run.completed', data: { status: 'completed', finalText: 'All done.' } });
    const again = await h.api('alice', 'POST', `/runs/${runId}/close`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('run_finished');
  });

  test('closes an idle run released from memory (resumed here to complete it)', async () => {
    const runId = await startIdleRun();
    await h.driver.runner.suspend(runId, 'nobody is there to answer');
    expect(await h.store.getRun(runId)).toMatchObject({ status: 'idle', owner: null });
    expect((await h.api('alice', 'GET', `/runs/${runId}`)).body).toMatchObject({ status: 'idle', waitingFor: 'message' });
    const closed = await h.api('alice', 'POST', `/runs/${runId}/close`);
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ status: 'completed', finalText: 'All done.' });
    const events = await h.store.readEvents(runId);
    expect(events.filter((e) => e.type === 'run.started')).toHaveLength(1);
    expect(events.map((e) => e.type)).toContain('run.resumed');
  });

  test('409 not_idle for a run waiting for an approval (nothing answered); 400 for a body with fields; 403 for a run of another user', async () => {
    const { runId, interactionId } = await startAskingRun(h);
    const busy = await h.api('alice', 'POST', `/runs/${runId}/close`);
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('not_idle');
    expect(busy.body.error.message).toContain(interactionId);
    expect(await h.store.getInteraction(interactionId)).toMatchObject({ status: 'pending' });
    const bad = await h.api('alice', 'POST', `/runs/${runId}/close`, { force: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_input');
    const other = await h.api('bob', 'POST', `/runs/${runId}/close`);
    expect(other.status).toBe(403);
    expect(await h.store.getInteraction(interactionId)).toMatchObject({ status: 'pending' });
    await h.api('alice', 'POST', `/runs/${runId}/cancel`);
  });

  test('is documented in /openapi.json with the idle status and waitingFor', async () => {
    const doc = (await h.api('alice', 'GET', '/openapi.json')).body;
    expect(doc.paths['/runs/{id}/close'].post).toBeDefined();
    const text = JSON.stringify(doc);
    expect(text).toContain('"idle"');
    expect(text).toContain('waitingFor');
  });
});
