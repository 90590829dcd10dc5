import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { DurableRunDriver } from './durable-driver.js';
import { startServer, type RunningServer } from './server.js';
import { ServerPolicy } from '../runtime/server-policy.js';
import { enc, eventually, startHarness, TOKENS, type Harness } from './test-support/harness.js';

// Every home the server could derive is a temp folder, so "no settings file was written" is checkable.
const fakeHome = mkdtempSync(join(tmpdir(), 'sage-policy-home-'));
const sageHome = mkdtempSync(join(tmpdir(), 'sage-policy-sagehome-'));
process.env['HOME'] = fakeHome;
process.env['SAGE_HOME'] = sageHome;
afterAll(() => {
  rmSync(fakeHome, { recursive: true, force: true });
  rmSync(sageHome, { recursive: true, force: true });
});

/** No `.sage` folder (settings files) anywhere the server could have written one. */
function noSettingsWritten(h: Harness): void {
  for (const dir of [fakeHome, sageHome, h.dir]) expect(existsSync(join(dir, '.sage')), `${dir}/.sage`).toBe(false);
}

const bashTurns = (command: string) => [{ text: 'running', toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'ran' }, { text: 'bye' }];

async function startBashAsk(h: Harness, who: 'alice' | 'bob', command = 'touch made.txt') {
  const started = await h.api(who, 'POST', '/runs', { task: 'make a file', model: h.script(bashTurns(command)) });
  expect(started.status).toBe(201);
  const record = await eventually(async () => (await h.store.listInteractions({ runId: started.body.id, status: ['pending'] }))[0]);
  return { runId: started.body.id as string, record };
}

const ruleNames = (list: { rule: string }[]) => list.map((r) => r.rule);

describe('answers never write settings files and only save a suggested rule', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  test('bob\'s remember "user" with rule "Bash" is refused (400, field rule): nothing stored, nothing written, the run still waits', async () => {
    const { runId, record } = await startBashAsk(h, 'bob');
    const res = await h.api('bob', 'POST', `/interactions/${enc(record.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'user', rule: 'Bash' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_response', field: 'rule' });
    expect(res.body.error.message).toContain('Bash(touch made.txt)');
    expect((await h.store.getInteraction(record.id))?.status).toBe('pending');
    expect(await h.store.listUserPermissions('bob')).toEqual([]);
    expect(existsSync(join(h.dir, 'made.txt'))).toBe(false);
    expect((await h.store.getRun(runId))?.status).not.toBe('failed');
    noSettingsWritten(h);
  });

  test('a rule on a request that suggests none is refused the same way', async () => {
    const started = await h.api('bob', 'POST', '/runs', { task: 'ask', model: h.script([{ text: 'q', toolCalls: [{ name: 'AskUserQuestion', input: { questions: [{ question: 'Which?', header: 'Pick', options: [{ label: 'A', description: 'a' }, { label: 'B', description: 'b' }], multiSelect: false }] } }] }, { text: 'ok' }, { text: 'bye' }]) });
    const record = await eventually(async () => (await h.store.listInteractions({ runId: started.body.id, status: ['pending'] }))[0]);
    const res = await h.api('bob', 'POST', `/interactions/${enc(record.id)}/respond`, { kind: 'questions', answers: { 'Which?': 'A' }, rule: 'Bash' });
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('rule');
    expect((await h.store.getInteraction(record.id))?.status).toBe('pending');
  });

  test('a suggested rule with remember "user" lands in bob\'s per-user rules only, and the call runs', async () => {
    const { runId, record } = await startBashAsk(h, 'bob', 'touch kept-by-user.txt');
    const suggested = record.request.kind === 'confirm' ? record.request.suggestions?.[0]?.rule : undefined;
    expect(suggested).toBe('Bash(touch kept-by-user.txt)');
    const res = await h.api('bob', 'POST', `/interactions/${enc(record.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'user', rule: suggested });
    expect(res.status).toBe(200);
    await eventually(async () => ((await h.store.readEvents(runId)).some((e) => e.type === 'tool.completed') ? true : undefined));
    expect(existsSync(join(h.dir, 'kept-by-user.txt'))).toBe(true);
    const stored = await eventually(async () => {
      const list = await h.store.listUserPermissions('bob');
      return list.length > 0 ? list : undefined;
    });
    expect(stored.map((r) => [r.rule, r.behavior, r.createdBy])).toEqual([['Bash(touch kept-by-user.txt)', 'allow', 'bob']]);
    expect(await h.store.listUserPermissions('alice')).toEqual([]);
    noSettingsWritten(h);
  });

  test('remember "project" writes no file: the rule goes to the run owner\'s per-user rules', async () => {
    const { runId, record } = await startBashAsk(h, 'alice', 'touch project.txt');
    const res = await h.api('alice', 'POST', `/interactions/${enc(record.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'project' });
    expect(res.status).toBe(200);
    await eventually(async () => ((await h.store.readEvents(runId)).some((e) => e.type === 'tool.completed') ? true : undefined));
    await eventually(async () => ((await h.store.listUserPermissions('alice')).some((r) => r.rule === 'Bash(touch project.txt)') ? true : undefined));
    noSettingsWritten(h);
  });

  // "Always, this project" (.sage/settings.local.json) changes everyone's runs in the folder: an
  // admin's answer in a trusted folder only (project-rules-routes.test.ts).
  test('remember "local" from a non-admin is refused (403, field remember): nothing written, nothing stored, the run still waits', async () => {
    const { record } = await startBashAsk(h, 'alice', 'touch local.txt');
    const res = await h.api('alice', 'POST', `/interactions/${enc(record.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'local' });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'policy_forbidden', field: 'remember' });
    expect((await h.store.getInteraction(record.id))?.status).toBe('pending');
    expect((await h.store.listUserPermissions('alice')).some((r) => r.rule === 'Bash(touch local.txt)')).toBe(false);
    noSettingsWritten(h);
  });
});

describe('POST /runs within the operator\'s policy', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  test('permissionMode bypassPermissions from a client is 403 naming the allowed modes, and no run is created', async () => {
    const res = await h.api('bob', 'POST', '/runs', { task: 'x', model: h.script(bashTurns('id')), permissionMode: 'bypassPermissions' });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'policy_forbidden', field: 'permissionMode' });
    expect(res.body.error.message).toContain('default, acceptEdits, plan, dontAsk');
    // Admins are capped too: the operator did not allow the mode for anyone.
    expect((await h.api('carol', 'POST', '/runs', { task: 'x', model: h.script(bashTurns('id')), permissionMode: 'bypassPermissions' })).status).toBe(403);
    expect(await h.store.listRuns({})).toEqual([]);
  });

  test('allow ["Bash"] from a non-admin is 403 and no run is created; an admin may', async () => {
    const res = await h.api('bob', 'POST', '/runs', { task: 'x', model: h.script(bashTurns('id')), allow: ['Bash'] });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'policy_forbidden', field: 'allow' });
    expect(await h.store.listRuns({ userId: 'bob' })).toEqual([]);
    const asAdmin = await h.api('carol', 'POST', '/runs', { task: 'x', model: h.script([{ text: 'done' }]), allow: ['Bash(npm test)'] });
    expect(asAdmin.status).toBe(201);
  });

  test('a client may still make its own gate stricter (ask and deny rules, a stricter mode)', async () => {
    const res = await h.api('bob', 'POST', '/runs', { task: 'x', model: h.script([{ text: 'done' }]), deny: ['Bash(curl *)'], ask: ['Read'], permissionMode: 'dontAsk' });
    expect(res.status).toBe(201);
  });
});

describe('per-user rules: who may edit whose', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  test('alice may not add an allow rule to herself (403); her list is unchanged', async () => {
    const res = await h.api('alice', 'POST', '/permissions/alice/allow', { rule: 'Bash' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('policy_forbidden');
    expect(res.body.error.message).toContain('only admins');
    expect(await h.store.listUserPermissions('alice')).toEqual([]);
  });

  test('alice may add a deny to herself and remove her own, but not one an admin put on her', async () => {
    expect((await h.api('carol', 'POST', '/permissions/alice/deny', { rule: 'Bash(git push *)' })).status).toBe(201);
    const del = await h.api('alice', 'DELETE', `/permissions/alice/deny/${enc('Bash(git push *)')}`);
    expect(del.status).toBe(403);
    expect(del.body.error.code).toBe('policy_forbidden');
    expect(del.body.error.message).toContain('"carol"');
    expect((await h.store.listUserPermissions('alice')).map((r) => [r.rule, r.createdBy])).toEqual([['Bash(git push *)', 'carol']]);

    expect((await h.api('alice', 'POST', '/permissions/alice/deny', { rule: 'Read(./secrets/**)' })).status).toBe(201);
    expect((await h.api('alice', 'DELETE', `/permissions/alice/deny/${enc('Read(./secrets/**)')}`)).status).toBe(200);
    // Re-adding the admin's deny as herself does not make it hers.
    await h.api('alice', 'POST', '/permissions/alice/deny', { rule: 'Bash(git push *)' });
    expect((await h.api('alice', 'DELETE', `/permissions/alice/deny/${enc('Bash(git push *)')}`)).status).toBe(403);
    // An admin may remove it.
    expect((await h.api('carol', 'DELETE', `/permissions/alice/deny/${enc('Bash(git push *)')}`)).status).toBe(200);
  });

  test('an admin\'s deny on a rule the user already denied becomes the admin\'s', async () => {
    await h.api('bob', 'POST', '/permissions/bob/deny', { rule: 'Bash(rm *)' });
    await h.api('carol', 'POST', '/permissions/bob/deny', { rule: 'Bash(rm *)' });
    expect((await h.store.listUserPermissions('bob')).map((r) => r.createdBy)).toEqual(['carol']);
    expect((await h.api('bob', 'DELETE', `/permissions/bob/deny/${enc('Bash(rm *)')}`)).status).toBe(403);
  });
});

describe('per-user allow rules when the operator permits them', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ serverPolicy: new ServerPolicy({ clientAllowRules: true }) });
  });
  afterAll(async () => {
    await h.close();
  });

  test('alice may add allow rules, but an allow never replaces a deny someone else put on her', async () => {
    const added = await h.api('alice', 'POST', '/permissions/alice/allow', { rule: 'Bash(npm test)' });
    expect(added.status).toBe(201);
    expect(ruleNames(added.body.allow)).toEqual(['Bash(npm test)']);
    await h.api('carol', 'POST', '/permissions/alice/deny', { rule: 'Bash(git push *)' });
    const over = await h.api('alice', 'POST', '/permissions/alice/allow', { rule: 'Bash(git push *)' });
    expect(over.status).toBe(403);
    const list = await h.store.listUserPermissions('alice');
    expect(list.find((r) => r.rule === 'Bash(git push *)')?.behavior).toBe('deny');
  });

  test('and POST /runs may carry allow rules', async () => {
    expect((await h.api('bob', 'POST', '/runs', { task: 'x', model: h.script([{ text: 'done' }]), allow: ['Bash(npm test)'] })).status).toBe(201);
  });
});

describe('server-wide rules come before anything a client sent', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ serverPolicy: new ServerPolicy({ permissionModes: ['default', 'bypassPermissions'], deny: ['Bash(rm *)'] }) });
  });
  afterAll(async () => {
    await h.close();
  });

  test('a server-wide deny of Bash(rm *) denies `rm -rf build` in a web run with a client allow and bypassPermissions', async () => {
    mkdirSync(join(h.dir, 'build'));
    const started = await h.api('carol', 'POST', '/runs', { task: 'clean', model: h.script(bashTurns('rm -rf build')), permissionMode: 'bypassPermissions', allow: ['Bash', 'Bash(rm -rf build)'] });
    expect(started.status).toBe(201);
    const decided = await eventually(async () => (await h.store.readEvents(started.body.id)).find((e) => e.type === 'permission.decided'));
    expect(decided.data).toMatchObject({ behavior: 'deny', rule: 'Bash(rm *)', ruleSource: 'server policy' });
    // The model was told, and the run went on to its next turn without running anything.
    await eventually(async () => ((await h.store.readEvents(started.body.id)).some((e) => e.type === 'step.completed') ? true : undefined));
    expect(existsSync(join(h.dir, 'build'))).toBe(true);
  });

  test('a per-user allow rule does not lift it either', async () => {
    mkdirSync(join(h.dir, 'build2'));
    await h.api('carol', 'POST', '/permissions/bob/allow', { rule: 'Bash(rm -rf build2)' });
    const started = await h.api('bob', 'POST', '/runs', { task: 'clean', model: h.script(bashTurns('rm -rf build2')) });
    const decided = await eventually(async () => (await h.store.readEvents(started.body.id)).find((e) => e.type === 'permission.decided'));
    expect(decided.data).toMatchObject({ behavior: 'deny', rule: 'Bash(rm *)' });
    expect(existsSync(join(h.dir, 'build2'))).toBe(true);
  });
});

describe('a resumed run gets the current policy', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function serve(store: Store, dir: string, serverPolicy: ServerPolicy): Promise<RunningServer> {
    const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true, serverPolicy });
    return startServer({ store, driver, port: 0, tokens: `${TOKENS.alice}=alice,${TOKENS.carol}=carol:admin`, env: {}, logger: pino({ level: 'silent' }), webRoot: false });
  }
  async function call(server: RunningServer, who: 'alice' | 'carol', method: string, path: string, body?: unknown) {
    const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${TOKENS[who]}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  }
  const question = { name: 'AskUserQuestion', input: { questions: [{ question: 'Go on?', header: 'Go', options: [{ label: 'Yes', description: 'y' }, { label: 'No', description: 'n' }], multiSelect: false }] } };

  test('the current deny list applies, a mode and allow rules the policy no longer permits are dropped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-policy-resume-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'build'));
    const { writeFileSync } = await import('node:fs');
    const script = (name: string, command: string) => {
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify({ turns: [{ text: 'asking', toolCalls: [question] }, { text: 'running', toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'done' }, { text: 'bye' }] }));
      return `scripted:${file}`;
    };
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const permissive = new ServerPolicy({ permissionModes: ['default', 'bypassPermissions'], clientAllowRules: true });
    const first = await serve(store, dir, permissive);
    const admin = await call(first, 'carol', 'POST', '/runs', { task: 'clean', model: script('admin.json', 'rm -rf build'), permissionMode: 'bypassPermissions', allow: ['Bash'] });
    const user = await call(first, 'alice', 'POST', '/runs', { task: 'touch', model: script('user.json', 'touch resumed.txt'), permissionMode: 'bypassPermissions', allow: ['Bash(touch *)'] });
    expect([admin.status, user.status]).toEqual([201, 201]);
    const pendingOf = (runId: string) => eventually(async () => (await store.listInteractions({ runId, status: ['pending'] }))[0]);
    const adminAsk = await pendingOf(admin.body.id);
    const userAsk = await pendingOf(user.body.id);
    await first.close();

    const second = await serve(store, dir, new ServerPolicy({ deny: ['Bash(rm *)'] }));
    try {
      expect((await call(second, 'carol', 'POST', `/interactions/${enc(adminAsk.id)}/respond`, { kind: 'questions', answers: { 'Go on?': 'Yes' } })).status).toBe(200);
      const denied = await eventually(async () => (await store.readEvents(admin.body.id)).find((e) => e.type === 'permission.decided' && e.data['toolName'] === 'Bash'));
      expect(denied.data).toMatchObject({ behavior: 'deny', rule: 'Bash(rm *)' });
      expect(existsSync(join(dir, 'build'))).toBe(true);

      // alice's run: bypassPermissions and her allow rule are no longer permitted, so the touch asks.
      expect((await call(second, 'alice', 'POST', `/interactions/${enc(userAsk.id)}/respond`, { kind: 'questions', answers: { 'Go on?': 'Yes' } })).status).toBe(200);
      const asked = await eventually(async () => (await store.listInteractions({ runId: user.body.id, status: ['pending'] })).find((r) => r.kind === 'confirm'));
      expect(asked.request.title).toBe('Allow Bash?');
      expect(existsSync(join(dir, 'resumed.txt'))).toBe(false);
    } finally {
      await second.close();
      await store.close();
    }
  });

  test('an "always for this session" answer still holds after the run was resumed by another server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-policy-session-'));
    dirs.push(dir);
    const { writeFileSync } = await import('node:fs');
    const touch = { name: 'Bash', input: { command: 'touch again.txt' } };
    const file = join(dir, 'session.json');
    writeFileSync(file, JSON.stringify({ turns: [{ text: 'first', toolCalls: [touch] }, { text: 'asking', toolCalls: [question] }, { text: 'again', toolCalls: [touch] }, { text: 'done' }, { text: 'bye' }] }));
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const first = await serve(store, dir, new ServerPolicy());
    const { body: run } = await call(first, 'alice', 'POST', '/runs', { task: 'touch twice', model: `scripted:${file}` });
    const ask = await eventually(async () => (await store.listInteractions({ runId: run.id, status: ['pending'] }))[0]);
    const rule = ask.request.kind === 'confirm' ? ask.request.suggestions?.[0]?.rule : undefined;
    expect(rule).toBe('Bash(touch again.txt)');
    expect((await call(first, 'alice', 'POST', `/interactions/${enc(ask.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'session', rule })).status).toBe(200);
    const questionAsk = await eventually(async () => (await store.listInteractions({ runId: run.id, status: ['pending'] })).find((r) => r.kind === 'questions'));
    await first.close();

    const second = await serve(store, dir, new ServerPolicy());
    try {
      expect((await call(second, 'alice', 'POST', `/interactions/${enc(questionAsk.id)}/respond`, { kind: 'questions', answers: { 'Go on?': 'Yes' } })).status).toBe(200);
      const decisions = await eventually(async () => {
        const found = (await store.readEvents(run.id)).filter((e) => e.type === 'permission.decided' && e.data['toolName'] === 'Bash');
        return found.length >= 3 ? found : undefined;
      });
      // ask, (answered), then allowed by the session rule without a second ask; no per-user rule was saved.
      expect(decisions.at(-1)!.data).toMatchObject({ behavior: 'allow', rule: 'Bash(touch again.txt)', ruleSource: 'session' });
      expect(await store.listUserPermissions('alice')).toEqual([]);
    } finally {
      await second.close();
      await store.close();
    }
  });
});

test('nothing above wrote a settings file under HOME or SAGE_HOME', () => {
  expect(readdirSync(fakeHome)).toEqual([]);
  expect(readdirSync(sageHome)).toEqual([]);
});
