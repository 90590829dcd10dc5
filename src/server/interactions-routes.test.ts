import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, eventually, startAskingRun, startHarness, TOKENS, type Harness } from './test-support/harness.js';
import { SseClient } from './test-support/sse-client.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('GET /interactions', () => {
  test('the inbox lists pending requests; one request reads by id', async () => {
    const { runId, interactionId } = await startAskingRun(h);
    const inbox = await h.api('alice', 'GET', '/interactions?status=pending');
    expect(inbox.status).toBe(200);
    const mine = inbox.body.interactions.find((i: { id: string }) => i.id === interactionId);
    expect(mine).toMatchObject({ runId, userId: 'alice', kind: 'confirm', status: 'pending' });
    const byRun = await h.api('alice', 'GET', `/interactions?runId=${runId}`);
    expect(byRun.body.interactions.map((i: { id: string }) => i.id)).toEqual([interactionId]);
    const one = await h.api('alice', 'GET', `/interactions/${enc(interactionId)}`);
    expect(one.body.request).toMatchObject({ kind: 'confirm', toolName: 'Write' });
    const bad = await h.api('alice', 'GET', '/interactions?status=done');
    expect(bad.status).toBe(400);
  });

  test("every interaction carries its context: the task's first line, the folder, who asks, the risk and the mode", async () => {
    const started = await h.api('alice', 'POST', '/runs', { task: 'Fix add() and publish\nThe add function subtracts.', permissionMode: 'acceptEdits', model: h.script([{ text: 'Cleaning.', toolCalls: [{ name: 'Bash', input: { command: 'rm -rf build' } }] }, { text: 'Done.' }]) });
    const runId = started.body.id as string;
    const interactionId = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id);
    const expected = { task: 'Fix add() and publish', folder: expect.stringMatching(/\S/), asker: { kind: 'run' }, risk: 'HIGH', mode: 'acceptEdits' };
    const listed = (await h.api('alice', 'GET', `/interactions?runId=${runId}`)).body.interactions[0];
    expect(listed.context).toEqual(expected);
    expect((await h.api('alice', 'GET', `/interactions/${enc(interactionId)}`)).body.context).toEqual(expected);
    expect((await h.api('alice', 'GET', `/runs/${enc(runId)}/suspended`)).body.interaction.context).toEqual(expected);
    const answered = await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { requestId: interactionId, kind: 'confirm', confirmed: false });
    expect(answered.body.context).toEqual(expected);
  });

  test('404 for an unknown interaction', async () => {
    const res = await h.api('alice', 'GET', '/interactions/int_nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('interaction_not_found');
  });
});

describe('POST /interactions/:id/respond', () => {
  test('200 for the first valid answer: it resumes the run, which completes the tool', async () => {
    const { runId, interactionId } = await startAskingRun(h);
    const res = await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { requestId: interactionId, kind: 'confirm', confirmed: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: interactionId, status: 'answered', answeredBy: 'alice' });
    expect(res.body.response).toMatchObject({ confirmed: true, userId: 'alice' });
    const completed = await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed'));
    expect(completed.data).toMatchObject({ toolName: 'Write', isError: false });
  });

  test('409 once answered, saying by whom and when', async () => {
    const { interactionId } = await startAskingRun(h);
    const first = await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: true });
    expect(first.status).toBe(200);
    const second = await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: false });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('interaction_already_answered');
    expect(second.body.error.message).toContain('by alice');
    expect(second.body.error.message).toContain(first.body.answeredAt);
  });

  test('two answers at once: exactly one wins, the other gets 409', async () => {
    const { interactionId } = await startAskingRun(h);
    const answers = await Promise.all([
      h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: true }),
      h.api('carol', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: false, message: 'no' }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const loser = answers.find((a) => a.status === 409)!;
    const winner = answers.find((a) => a.status === 200)!;
    expect(loser.body.error.message).toContain(`by ${winner.body.answeredBy}`);
  });

  test.each([
    [{ kind: 'input', text: 'x' }, 'kind'],
    [{ kind: 'confirm' }, 'confirmed'],
    [{ kind: 'confirm', confirmed: 'yes' }, 'confirmed'],
    [{ kind: 'confirm', confirmed: true, bogus: 1 }, undefined],
    [{ requestId: 'someone-else', kind: 'confirm', confirmed: true }, 'requestId'],
  ])('400 for an invalid answer %j, naming the field', async (body, field) => {
    const { interactionId } = await startAskingRun(h);
    const res = await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_response');
    if (field) expect(res.body.error.field).toBe(field);
    // An invalid answer does not use up the request.
    expect((await h.store.getInteraction(interactionId))?.status).toBe('pending');
  });

  test('a client cannot answer in someone else\'s name', async () => {
    const { interactionId } = await startAskingRun(h);
    const res = await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: true, userId: 'mallory' });
    expect(res.status).toBe(200);
    expect(res.body.answeredBy).toBe('alice');
    expect(res.body.response.userId).toBe('alice');
  });

  test('410 for a cancelled request', async () => {
    const { runId, interactionId } = await startAskingRun(h);
    await h.api('alice', 'POST', `/runs/${runId}/cancel`);
    const res = await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: true });
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe('interaction_cancelled');
  });

  test('404 for an unknown request', async () => {
    const res = await h.api('alice', 'POST', '/interactions/int_nope/respond', { kind: 'confirm', confirmed: true });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('interaction_not_found');
  });

  test('with Accept: text/event-stream the answer streams the continued run', async () => {
    const { runId, interactionId } = await startAskingRun(h);
    const before = await h.store.lastEventSeq(runId);
    const sse = new SseClient(`${h.url}/interactions/${enc(interactionId)}/respond`, { token: TOKENS.alice, method: 'POST', body: { kind: 'confirm', confirmed: true } });
    await sse.waitFor((e) => e.type === 'tool.completed');
    expect(sse.status).toBe(200);
    // The stream starts after the log's end as it was when the answer came (never replaying older events).
    expect(sse.events[0]!.seq).toBeGreaterThan(before);
    expect(sse.events.map((e) => e.type)).toContain('interaction.answered');
    const seqs = sse.events.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i));
    sse.abort();
  });
});

describe('expiry', () => {
  test('410 for an expired request; the model is told no one answered', async () => {
    const short = await startHarness({ interactionTimeoutMs: 150 });
    try {
      const { runId, interactionId } = await startAskingRun(short);
      await eventually(async () => ((await short.store.getInteraction(interactionId))?.status === 'expired' ? true : undefined));
      const res = await short.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: true });
      expect(res.status).toBe(410);
      expect(res.body.error.code).toBe('interaction_expired');
      const result = await eventually(async () => (await short.store.readEvents(runId)).find((e) => e.type === 'tool.completed'));
      expect(result.data).toMatchObject({ isError: true });
    } finally {
      await short.close();
    }
  });
});
