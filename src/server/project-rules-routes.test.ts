import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { trustFolder } from '../permission/index.js';
import { enc, eventually, startHarness, type Harness, type Who } from './test-support/harness.js';

let h: Harness;
let home: string;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'sage-home-'));
  h = await startHarness({ home });
});
afterAll(async () => {
  await h.close();
  rmSync(home, { recursive: true, force: true });
});

const touchScript = (file: string) => [{ text: 'Touching.', toolCalls: [{ name: 'Bash', input: { command: `touch ${file}` } }] }, { text: 'Done.' }];

async function askingRun(who: Who, file: string): Promise<{ runId: string; id: string; rule: string; cwd: string }> {
  const started = await h.api(who, 'POST', '/runs', { task: `touch ${file}`, model: h.script(touchScript(file)) });
  expect(started.status).toBe(201);
  const runId = started.body.id as string;
  const record = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]);
  const rule = record.request.kind === 'confirm' ? record.request.suggestions?.[0]?.rule : undefined;
  expect(rule).toBe(`Bash(touch ${file})`);
  const run = await h.store.getRun(runId);
  return { runId, id: record.id, rule: rule!, cwd: run!.options['cwd'] as string };
}

const localFile = (cwd: string) => join(cwd, '.sage', 'settings.local.json');

describe('"always, this project": remember "local" from the web', () => {
  test('refused while the folder is not trusted (409) and for a non-admin (403); nothing is written and the run keeps waiting', async () => {
    const asked = await askingRun('carol', 'untrusted.txt');
    const rules = await h.api('carol', 'GET', `/runs/${asked.runId}/rules`);
    expect(rules.body.project).toMatchObject({ cwd: asked.cwd, file: localFile(asked.cwd), trusted: false, allow: [], canSave: false, why: expect.stringContaining('not trusted') });
    expect(rules.body.project.why).toContain(`sage trust ${asked.cwd}`);
    const refused = await h.api('carol', 'POST', `/interactions/${enc(asked.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'local', rule: asked.rule });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('folder_not_trusted');
    expect(existsSync(localFile(asked.cwd))).toBe(false);
    expect((await h.store.getInteraction(asked.id))?.status).toBe('pending');

    trustFolder(home, realpathSync(asked.cwd));
    const mine = await askingRun('alice', 'by-alice.txt');
    expect((await h.api('alice', 'GET', `/runs/${mine.runId}/rules`)).body.project).toMatchObject({ trusted: true, canSave: false, why: expect.stringContaining('only an admin') });
    const forbidden = await h.api('alice', 'POST', `/interactions/${enc(mine.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'local', rule: mine.rule });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toMatchObject({ code: 'policy_forbidden', field: 'remember' });
    expect(existsSync(localFile(mine.cwd))).toBe(false);
    expect((await h.store.getInteraction(mine.id))?.status).toBe('pending');
    for (const runId of [asked.runId, mine.runId]) await h.api('carol', 'POST', `/runs/${runId}/cancel`, {});
  });

  test("an admin's answer in a trusted folder writes .sage/settings.local.json, is listed for the project, and a new run is not asked again", async () => {
    trustFolder(home, realpathSync(h.dir));
    const asked = await askingRun('carol', 'project-ok.txt');
    const answered = await h.api('carol', 'POST', `/interactions/${enc(asked.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'local', rule: asked.rule });
    expect(answered.status).toBe(200);
    // The tool ran (the run then waits for its next message: web runs go on until closed).
    await eventually(async () => (await h.store.readEvents(asked.runId)).find((e) => e.type === 'tool.completed'));
    // Written through the settings writer: the rule, and the file git-ignored beside it.
    const file = JSON.parse(readFileSync(localFile(asked.cwd), 'utf8'));
    expect(file.permissions.allow).toEqual([asked.rule]);
    expect(readFileSync(join(asked.cwd, '.sage', '.gitignore'), 'utf8')).toContain('settings.local.json');
    // Not a per-user rule: the project file is where it lives.
    expect((await h.api('carol', 'GET', '/permissions/carol')).body.allow ?? []).not.toContainEqual(expect.objectContaining({ rule: asked.rule }));

    // Anyone's new run in the folder: allowed by the project rule, no person asked.
    const started = await h.api('alice', 'POST', '/runs', { task: 'again', model: h.script(touchScript('project-ok.txt')) });
    const runId = started.body.id as string;
    const decided = await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'permission.decided'));
    expect(decided.data).toMatchObject({ toolName: 'Bash', behavior: 'allow', rule: asked.rule });
    expect(JSON.stringify(decided.data)).toContain('settings.local.json');
    await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed'));
    expect(await h.store.listInteractions({ runId, status: ['pending', 'answered'] }).then((l) => l.filter((r) => r.kind === 'confirm'))).toEqual([]);
    expect((await h.api('alice', 'GET', `/runs/${runId}/rules`)).body.project).toMatchObject({ trusted: true, allow: [asked.rule], canSave: false });
  });
});
