import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, eventually, startHarness, type Harness } from './test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const touch = (file: string) => ({ name: 'Bash', input: { command: `touch ${file}` } });

describe('GET /runs/:id/rules', () => {
  test('lists the rules "always, this run" answers added; the owner and admins only', async () => {
    const model = h.script([{ text: 'one', toolCalls: [touch('a.txt')] }, { text: 'two', toolCalls: [touch('b.txt')] }, { text: 'done' }]);
    const { body: run } = await h.api('alice', 'POST', '/runs', { task: 'touch', model });
    // With the project rules of the run's folder (project-rules-routes.test.ts): alice may not add one.
    expect((await h.api('alice', 'GET', `/runs/${run.id}/rules`)).body).toEqual({ runId: run.id, session: [], project: expect.objectContaining({ allow: [], canSave: false }) });

    const first = await eventually(async () => (await h.store.listInteractions({ runId: run.id, status: ['pending'] }))[0]);
    const rule = first.request.kind === 'confirm' ? first.request.suggestions?.[0]?.rule : undefined;
    expect(rule).toBe('Bash(touch a.txt)');
    expect((await h.api('alice', 'POST', `/interactions/${enc(first.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'session', rule })).status).toBe(200);
    // An approval answered once adds no rule.
    const second = await eventually(async () => (await h.store.listInteractions({ runId: run.id, status: ['pending'] })).find((r) => r.id !== first.id && r.kind === 'confirm'));
    expect((await h.api('alice', 'POST', `/interactions/${enc(second.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'once' })).status).toBe(200);

    const listed = await h.api('alice', 'GET', `/runs/${run.id}/rules`);
    expect(listed.status).toBe(200);
    expect(listed.body.session).toEqual([{ rule: 'Bash(touch a.txt)', toolName: 'Bash', interactionId: first.id, answeredBy: 'alice', answeredAt: expect.any(String) }]);
    expect((await h.api('carol', 'GET', `/runs/${run.id}/rules`)).body.session).toHaveLength(1);
    // Another user gets the same answer as for the run itself (403), a missing run 404.
    expect((await h.api('bob', 'GET', `/runs/${run.id}/rules`)).status).toBe((await h.api('bob', 'GET', `/runs/${run.id}`)).status);
    expect((await h.api('bob', 'GET', `/runs/${run.id}/rules`)).status).toBe(403);
    expect((await h.api('alice', 'GET', '/runs/run_nope/rules')).status).toBe(404);
  });
});
