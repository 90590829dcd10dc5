import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, startAskingRun, startHarness, type Harness, type Who } from './test-support/harness.js';

let h: Harness;
let alice: { runId: string; interactionId: string };
beforeAll(async () => {
  h = await startHarness();
  alice = await startAskingRun(h, 'alice');
  await h.store.addUserPermission({ userId: 'alice', rule: 'Bash(npm test:*)', behavior: 'allow', createdBy: 'alice' });
});
afterAll(async () => {
  await h.close();
});

/** Every route that touches one of alice's things, as [method, path, body]. */
const aliceRoutes = (): [string, string, unknown?][] => [
  ['GET', `/runs/${alice.runId}`],
  ['GET', `/runs/${alice.runId}/events`],
  ['GET', `/runs/${alice.runId}/suspended`],
  ['POST', `/runs/${alice.runId}/messages`, { text: 'hi' }],
  ['POST', `/runs/${alice.runId}/cancel`, {}],
  ['GET', `/interactions/${enc(alice.interactionId)}`],
  ['POST', `/interactions/${enc(alice.interactionId)}/respond`, { kind: 'confirm', confirmed: false }],
  ['GET', `/interactions?runId=${alice.runId}`],
  ['GET', '/permissions/alice'],
  ['POST', '/permissions/alice/allow', { rule: 'Bash(rm -rf /)' }],
  ['POST', '/permissions/alice/deny', { rule: 'Read' }],
  ['DELETE', `/permissions/alice/allow/${enc('Bash(npm test:*)')}`],
  ['GET', `/audit?runId=${alice.runId}`],
  ['GET', '/audit?userId=alice'],
  ['GET', '/runs?userId=alice'],
];

describe('401 without a valid token', () => {
  test.each<[string, Record<string, string>]>([
    ['no header', {}],
    ['an unknown token', { authorization: 'Bearer not-a-token' }],
    ['another scheme', { authorization: 'Basic YWxpY2U6eA==' }],
  ])('%s', async (_name, headers) => {
    for (const path of ['/runs', '/interactions', '/audit', '/permissions/alice', '/me']) {
      const res = await fetch(h.url + path, { headers });
      expect(res.status, path).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
  });

  test('health and the API description need no token', async () => {
    expect((await h.api('nobody', 'GET', '/healthz')).status).toBe(200);
    expect((await h.api('nobody', 'GET', '/openapi.json')).status).toBe(200);
  });
});

describe("bob cannot read, answer or change anything of alice's", () => {
  test('403 on every route', async () => {
    for (const [method, path, body] of aliceRoutes()) {
      const res = await h.api('bob', method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    // Nothing changed: the run still waits and alice's rule is still there.
    expect((await h.store.getInteraction(alice.interactionId))?.status).toBe('pending');
    expect((await h.store.getRun(alice.runId))?.status).toBe('running');
    expect((await h.store.listUserPermissions('alice')).map((r) => r.rule)).toEqual(['Bash(npm test:*)']);
  });

  test("bob's listings do not contain alice's runs or interactions", async () => {
    const runs = await h.api('bob', 'GET', '/runs');
    expect(runs.body.runs).toEqual([]);
    const inbox = await h.api('bob', 'GET', '/interactions?status=pending');
    expect(inbox.body.interactions).toEqual([]);
    const audit = await h.api('bob', 'GET', '/audit');
    expect(audit.body.entries.every((e: { userId: string }) => e.userId === 'bob')).toBe(true);
  });
});

describe('an admin sees and answers everyone\'s', () => {
  test('carol reads alice\'s run, inbox and permissions, and answers her request', async () => {
    const asCarol = async (who: Who, method: string, path: string, body?: unknown) => h.api(who, method, path, body);
    expect((await asCarol('carol', 'GET', `/runs/${alice.runId}`)).status).toBe(200);
    const inbox = await asCarol('carol', 'GET', '/interactions?status=pending');
    expect(inbox.body.interactions.map((i: { id: string }) => i.id)).toContain(alice.interactionId);
    expect((await asCarol('carol', 'GET', '/permissions/alice')).body.allow.map((r: { rule: string }) => r.rule)).toEqual(['Bash(npm test:*)']);
    expect((await asCarol('carol', 'GET', '/runs?userId=alice')).body.runs.length).toBeGreaterThan(0);
    const answered = await asCarol('carol', 'POST', `/interactions/${enc(alice.interactionId)}/respond`, { kind: 'confirm', confirmed: false, message: 'not today' });
    expect(answered.status).toBe(200);
    expect(answered.body.answeredBy).toBe('carol');
  });

  test('/me says who the token is', async () => {
    // With who it is come the choices a new-run form offers (user-events-routes.test.ts checks them).
    expect((await h.api('bob', 'GET', '/me')).body).toMatchObject({ userId: 'bob', role: 'user', auth: true });
    expect((await h.api('carol', 'GET', '/me')).body).toMatchObject({ userId: 'carol', role: 'admin', auth: true });
  });
});
