import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, eventually, startAskingRun, startHarness, type Harness } from './test-support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const rules = (list: { rule: string }[]) => list.map((r) => r.rule);

describe('permissions', () => {
  test('add allow and deny patterns, list them, remove them', async () => {
    expect((await h.api('alice', 'GET', '/permissions/alice')).body).toEqual({ userId: 'alice', allow: [], deny: [] });
    // Allow rules for a user come from an admin under the default policy (server-policy-routes.test.ts).
    const added = await h.api('carol', 'POST', '/permissions/alice/allow', { rule: 'Bash(npm run test:*)' });
    expect(added.status).toBe(201);
    expect(rules(added.body.allow)).toEqual(['Bash(npm run test:*)']);
    expect(added.body.allow[0].createdBy).toBe('carol');
    await h.api('alice', 'POST', '/permissions/alice/deny', { rule: 'Read(./secrets/**)' });
    const listed = await h.api('alice', 'GET', '/permissions/alice');
    expect(rules(listed.body.deny)).toEqual(['Read(./secrets/**)']);

    // Slashes, parentheses and spaces survive the path when URL-encoded.
    const removed = await h.api('alice', 'DELETE', `/permissions/alice/deny/${enc('Read(./secrets/**)')}`);
    expect(removed.status).toBe(200);
    expect(removed.body.deny).toEqual([]);
    const gone = await h.api('alice', 'DELETE', `/permissions/alice/deny/${enc('Read(./secrets/**)')}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('rule_not_found');
  });

  test('adding a pattern to one list takes it off the other', async () => {
    expect((await h.api('carol', 'POST', '/permissions/bob/allow', { rule: 'Bash(git push:*)' })).status).toBe(201);
    const moved = await h.api('bob', 'POST', '/permissions/bob/deny', { rule: 'Bash(git push:*)' });
    expect(rules(moved.body.allow)).toEqual([]);
    expect(rules(moved.body.deny)).toEqual(['Bash(git push:*)']);
  });

  test('400 for a malformed rule or kind, naming the field', async () => {
    const bad = await h.api('alice', 'POST', '/permissions/alice/deny', { rule: 'Bash(npm' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('rule');
    const empty = await h.api('alice', 'POST', '/permissions/alice/deny', {});
    expect(empty.body.error.field).toBe('rule');
    const kind = await h.api('alice', 'DELETE', '/permissions/alice/maybe/Read');
    expect(kind.status).toBe(400);
  });

  test('a rule with an invisible or look-alike character is refused (400 naming the rule and the code point); nothing is stored', async () => {
    const before = (await h.api('alice', 'GET', '/permissions/alice')).body;
    for (const [rule, named] of [['Bash(cat\u200b *)', 'U+200B'], ['Read(secret.txt\u2060)', 'U+2060'], ['Bash(c\u0430t *)', 'U+0430'], ['Bash(cat\u00a0*)', 'U+00A0']] as const) {
      const refused = await h.api('alice', 'POST', '/permissions/alice/deny', { rule });
      expect(refused.status).toBe(400);
      expect(refused.body.error.field).toBe('rule');
      expect(refused.body.error.message).toContain(named);
      const allowed = await h.api('carol', 'POST', '/permissions/alice/allow', { rule });
      expect(allowed.status).toBe(400);
    }
    // The message shows the rule with the hidden character written out.
    expect((await h.api('alice', 'POST', '/permissions/alice/deny', { rule: 'Bash(cat\u200b *)' })).body.error.message).toContain('Bash(cat\\u{200b} *)');
    expect((await h.api('alice', 'GET', '/permissions/alice')).body).toEqual(before);
    // One stored before rules were checked for such characters can still be removed.
    await h.store.addUserPermission({ userId: 'alice', rule: 'Bash(cat\u200b *)', behavior: 'deny', createdBy: 'alice' });
    expect((await h.api('alice', 'DELETE', `/permissions/alice/deny/${enc('Bash(cat\u200b *)')}`)).status).toBe(200);
    expect((await h.api('alice', 'GET', '/permissions/alice')).body).toEqual(before);
  });

  test('a saved allow pattern is applied to the user\'s next run', async () => {
    await h.api('carol', 'POST', '/permissions/carol/allow', { rule: 'Write' });
    const { body: run } = await h.api('carol', 'POST', '/runs', { task: 'write', model: h.script([{ text: 'w', toolCalls: [{ name: 'Write', input: { file_path: 'a.txt', content: 'a' } }] }, { text: 'ok' }]) });
    const decided = await eventually(async () => (await h.store.readEvents(run.id)).find((e) => e.type === 'permission.decided'));
    expect(decided.data).toMatchObject({ behavior: 'allow', rule: 'Write' });
  });
});

describe('GET /audit', () => {
  test('records decisions with their reasons; filters by run; 400 for a bad filter', async () => {
    const { runId, interactionId } = await startAskingRun(h, 'alice');
    await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: false, message: 'not now' });
    const entries = await eventually(async () => {
      const res = await h.api('alice', 'GET', `/audit?runId=${runId}`);
      return res.body.entries.length >= 2 ? res.body.entries : undefined;
    });
    expect(entries.every((e: { runId: string }) => e.runId === runId)).toBe(true);
    expect(entries.some((e: { behavior: string; toolName: string }) => e.behavior === 'ask' && e.toolName === 'Write')).toBe(true);
    expect(entries.some((e: { data: { answer?: string } }) => e.data?.answer === 'rejected')).toBe(true);
    const bad = await h.api('alice', 'GET', '/audit?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('since');
    const unknownRun = await h.api('alice', 'GET', '/audit?runId=run_nope');
    expect(unknownRun.status).toBe(404);
  });

  test('an answer entry shows who answered, through which channel, the typed reason and the edited input', async () => {
    const answerEntry = async (runId: string) => eventually(async () => {
      const res = await h.api('alice', 'GET', `/audit?runId=${runId}`);
      return res.body.entries.find((e: { data: { kind?: string } | null }) => e.data?.kind === 'answer');
    });
    const denied = await startAskingRun(h, 'alice');
    await h.api('alice', 'POST', `/interactions/${enc(denied.interactionId)}/respond`, { kind: 'confirm', confirmed: false, message: 'wrong folder, use out/', channel: 'terminal' });
    const deniedEntry = await answerEntry(denied.runId);
    expect(deniedEntry.userId).toBe('alice');
    expect(deniedEntry.data).toMatchObject({ answer: 'rejected', answeredBy: 'alice', message: 'wrong folder, use out/' });
    // The server stamps the channel: a client claiming 'terminal' is recorded as answering on the web.
    expect(deniedEntry.data.channel).toBe('web');

    const edited = await startAskingRun(h, 'alice');
    const newInput = { file_path: 'out/edited.txt', content: 'edited by a person' };
    await h.api('alice', 'POST', `/interactions/${enc(edited.interactionId)}/respond`, { kind: 'confirm', confirmed: true, updatedInput: newInput });
    const editedEntry = await answerEntry(edited.runId);
    expect(editedEntry.data).toMatchObject({ answer: 'approved', answeredBy: 'alice', updatedInput: newInput });
    expect(editedEntry.data.message).toBeUndefined();
  });

  test('the answers given to an AskUserQuestion are recorded with who answered', async () => {
    const questions = [{ question: 'Which color?', header: 'Color', options: [{ label: 'Red', description: 'r' }, { label: 'Blue', description: 'b' }], multiSelect: false }];
    const started = await h.api('bob', 'POST', '/runs', { task: 'ask', model: h.script([{ text: 'q', toolCalls: [{ name: 'AskUserQuestion', input: { questions } }] }, { text: 'ok' }, { text: 'bye' }]) });
    const record = await eventually(async () => (await h.store.listInteractions({ runId: started.body.id, status: ['pending'] }))[0]);
    expect((await h.api('bob', 'POST', `/interactions/${enc(record.id)}/respond`, { kind: 'questions', answers: { 'Which color?': 'Blue' } })).status).toBe(200);
    const entry = await eventually(async () => {
      const res = await h.api('bob', 'GET', `/audit?runId=${started.body.id}`);
      return res.body.entries.find((e: { data: { kind?: string } | null }) => e.data?.kind === 'answer');
    });
    expect(entry).toMatchObject({ toolName: 'AskUserQuestion', userId: 'bob' });
    expect(entry.data).toMatchObject({ answeredBy: 'bob', channel: 'web', answers: { 'Which color?': 'Blue' } });
  });
});
