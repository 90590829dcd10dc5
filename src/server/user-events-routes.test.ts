import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { auditCsv } from './routes/audit.js';
import { SseClient } from './test-support/sse-client.js';
import { enc, eventually, startAskingRun, startHarness, TOKENS, type Harness } from './test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const data = (c: SseClient) => c.frames.filter((f) => f.event === 'interaction' || f.event === 'run').map((f) => JSON.parse(f.data) as { type: string; runId: string; interactionId?: string; status: string });

describe('GET /events (the user stream)', () => {
  test('tells the owner of a run about its interactions and status, and nobody else but an admin', async () => {
    const alice = new SseClient(`${h.url}/events`, { token: TOKENS.alice });
    const bob = new SseClient(`${h.url}/events`, { token: TOKENS.bob });
    const carol = new SseClient(`${h.url}/events`, { token: TOKENS.carol });
    await eventually(() => (alice.status && bob.status && carol.status ? true : undefined));
    expect(alice.status).toBe(200);
    const { runId, interactionId } = await startAskingRun(h, 'alice');
    await eventually(() => data(alice).find((e) => e.type === 'interaction' && e.interactionId === interactionId && e.status === 'pending'));
    await eventually(() => data(carol).find((e) => e.interactionId === interactionId));
    await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: false, message: 'no' });
    await eventually(() => data(alice).find((e) => e.interactionId === interactionId && e.status === 'answered'));
    await eventually(() => data(alice).find((e) => e.type === 'run' && e.runId === runId));
    // Bob's stream stayed open the whole time and heard nothing of alice's run.
    expect(data(bob).filter((e) => e.runId === runId)).toEqual([]);
    for (const c of [alice, bob, carol]) c.abort();
  });

  test('refuses a plain JSON request and a caller without a token', async () => {
    const plain = await h.api('alice', 'GET', '/events');
    expect(plain.status).toBe(400);
    expect(plain.body.error.message).toMatch(/text\/event-stream/);
    const nobody = await h.api('nobody', 'GET', '/events', undefined, { accept: 'text/event-stream' });
    expect(nobody.status).toBe(401);
  });
});

describe('what a client may pick', () => {
  test('GET /models lists the scripted model files; GET /roots and GET /me the roots and the allowed modes', async () => {
    const spec = h.script([{ text: 'hi' }]);
    const models = await h.api('alice', 'GET', '/models');
    expect(models.status).toBe(200);
    expect(models.body.scriptedModels).toContain(spec);
    const roots = await h.api('alice', 'GET', '/roots');
    expect(roots.body.roots).toHaveLength(1);
    const me = await h.api('alice', 'GET', '/me');
    expect(me.body).toMatchObject({ userId: 'alice', roots: roots.body.roots, permissionModes: ['default', 'acceptEdits', 'plan', 'dontAsk'] });
    expect(me.body.permissionModes).not.toContain('bypassPermissions');
  });
});

describe('GET /audit filters and export', () => {
  test('filters by decision and time, exports CSV and JSON as downloads', async () => {
    const { runId, interactionId } = await startAskingRun(h, 'bob');
    await h.api('bob', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: false, message: 'no' });
    await eventually(async () => ((await h.api('bob', 'GET', `/audit?runId=${runId}&decision=deny`)).body.entries.length > 0 ? true : undefined));
    const denied = (await h.api('bob', 'GET', `/audit?runId=${runId}&decision=deny`)).body.entries as { behavior: string }[];
    expect(denied.every((e) => e.behavior === 'deny')).toBe(true);
    const asked = (await h.api('bob', 'GET', `/audit?runId=${runId}&decision=ask`)).body.entries as { behavior: string }[];
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((e) => e.behavior === 'ask')).toBe(true);
    const before = await h.api('bob', 'GET', `/audit?runId=${runId}&until=2000-01-01T00:00:00Z`);
    expect(before.body.entries).toEqual([]);
    const csv = await h.api('bob', 'GET', `/audit?runId=${runId}&format=csv`);
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/attachment/);
    expect(String(csv.body).split('\r\n')[0]).toBe('at,runId,userId,toolCallId,toolName,behavior,reason,source,rule,data');
    const json = await h.api('bob', 'GET', `/audit?runId=${runId}&format=json`);
    expect(json.headers.get('content-disposition')).toMatch(/sage-audit\.json/);
    expect(json.body.entries.length).toBe((await h.api('bob', 'GET', `/audit?runId=${runId}`)).body.entries.length);
    const bad = await h.api('bob', 'GET', '/audit?decision=maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('decision');
  });

  test('a CSV cell that a spreadsheet would run as a formula is defused, and quotes are escaped', () => {
    const csv = auditCsv([{ at: 'x', runId: null, userId: 'u', toolCallId: null, toolName: 'Bash', behavior: 'deny', reason: '=HYPERLINK("http://evil")', source: 'user', rule: null, data: null }]);
    expect(csv.split('\r\n')[1]).toContain(`"'=HYPERLINK(""http://evil"")"`);
  });
});
