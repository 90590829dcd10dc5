import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, type Harness } from './test-support/harness.js';

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

describe('a web run in a subfolder of a project', () => {
  test("gets the deny rules of the folders above it: Read(secret.txt) and Bash(cat *) of p1 stop the run in p1/sub, and the secret is never read", async () => {
    const p1 = join(realpathSync(h.dir), 'p1');
    const sub = join(p1, 'sub');
    mkdirSync(join(p1, '.git'), { recursive: true });
    mkdirSync(join(p1, '.sage'), { recursive: true });
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(p1, '.sage', 'settings.local.json'), JSON.stringify({ permissions: { deny: ['Read(secret.txt)', 'Bash(cat *)'] } }));
    writeFileSync(join(sub, 'secret.txt'), 'TOP-SECRET-VALUE\n');
    const model = h.script([
      { text: 'Reading.', toolCalls: [{ name: 'Read', input: { file_path: join(sub, 'secret.txt') } }] },
      { text: 'Catting.', toolCalls: [{ name: 'Bash', input: { command: 'cat secret.txt' } }] },
      { text: 'Done.' },
    ]);
    const started = await h.api('alice', 'POST', '/runs', { task: 'read the secret', model, cwd: 'p1/sub', permissionMode: 'default' });
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    const decided = await eventually(async () => {
      const events = (await h.store.readEvents(runId)).filter((e) => e.type === 'permission.decided');
      return events.length >= 2 ? events : undefined;
    });
    expect(decided.map((e) => [e.data.toolName, e.data.behavior, e.data.rule])).toEqual([['Read', 'deny', 'Read(secret.txt)'], ['Bash', 'deny', 'Bash(cat *)']]);
    const run = await h.store.getRun(runId);
    expect(run?.options).toMatchObject({ cwd: sub, projectRoot: p1 });
    await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]);
    expect(JSON.stringify(await h.store.readEvents(runId))).not.toContain('TOP-SECRET-VALUE');
    await h.api('alice', 'POST', `/runs/${runId}/cancel`, {});
  });
});
