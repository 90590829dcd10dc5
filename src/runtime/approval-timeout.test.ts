import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { DurableRunner } from '../durable/durable-runner.js';
import { trustFolder } from '../permission/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { untilPast } from '../test-support/eventually.js';
import { createRunFactory, type RunRequest } from './create-run.js';
import { ServerPolicy } from './server-policy.js';
import { serverGatedRequest } from './web-gate.js';

// `approval.timeoutSeconds` of the settings files becomes a run's interaction timeout when it is
// admitted without one of its own: an ask nobody answers then expires as with --interaction-timeout.

let dir: string;
let home: string;
let project: string;
let store: Store;
const runners: DurableRunner[] = [];

beforeEach(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-approval-timeout-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(join(project, '.sage'), { recursive: true });
  store = await openSqliteStore(join(dir, 'sage.db'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function settings(file: string, timeoutSeconds: number): void {
  writeFileSync(file, JSON.stringify({ approval: { timeoutSeconds } }));
}

/** A run that writes a file (an ask in a fresh folder), then says it is done. */
function model(): string {
  const file = join(dir, 'script.json');
  writeFileSync(file, JSON.stringify({
    turns: [
      {
        toolCalls: [{ id: 'call_write', name: 'Write', input: { file_path: join(project, 'out.txt'), content: 'x' } }],
      },
      { text: 'done' },
    ],
  }));
  return `scripted:${file}`;
}

async function admitted(extra: Partial<RunRequest> = {}) {
  const factory = createRunFactory({ store, home });
  return factory.admitRun({ task: 't', surface: 'detached', model: model(), cwd: project, oneTask: true, ...extra });
}

function runner(): DurableRunner {
  const r = new DurableRunner({ store, runtime: createRunFactory({ store, home }), idleSuspendMs: 0 });
  runners.push(r);
  return r;
}

describe('approval.timeoutSeconds', () => {
  test('a trusted project\'s value expires an unanswered ask: the approval is denied, the run goes on', async () => {
    settings(join(project, '.sage', 'settings.json'), 1);
    trustFolder(home, project);
    const spec = await admitted();
    expect(spec.interactionTimeoutMs).toBe(1000);
    const r = runner();
    const handle = await r.start('t', spec);
    const { pendingInteractionId: id } = await handle.outcome;
    expect(id).toBeDefined();
    await untilPast((await store.getInteraction(id!))?.expiresAt);
    const recovered = await r.recover();
    expect(recovered.expired).toContain(id);
    await r.handle(handle.runId)?.outcome;
    const events = await store.readEvents(handle.runId);
    expect(events.find((e) => e.type === 'interaction.expired')).toMatchObject({ data: { interactionId: id } });
    const result = events.find((e) => e.type === 'tool.completed');
    expect(result?.data).toMatchObject({ isError: true, content: expect.stringMatching(/no one answered within/) });
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'completed', finalText: 'done' });
  });

  test('the run\'s own timeout (--interaction-timeout, the server\'s) wins over the setting', async () => {
    settings(join(project, '.sage', 'settings.json'), 1);
    trustFolder(home, project);
    expect((await admitted({ interactionTimeoutMs: 300_000 })).interactionTimeoutMs).toBe(300_000);
  });

  test('an untrusted project\'s value is ignored: the ask waits until it is answered', async () => {
    settings(join(project, '.sage', 'settings.json'), 1);
    const spec = await admitted();
    expect(spec.interactionTimeoutMs).toBeUndefined();
    const handle = await runner().start('t', spec);
    const { pendingInteractionId: id } = await handle.outcome;
    expect(await store.getInteraction(id!)).toMatchObject({ status: 'pending', expiresAt: null });
  });

  test('no file sets it: no timeout is stored', async () => {
    trustFolder(home, project);
    expect((await admitted()).interactionTimeoutMs).toBeUndefined();
  });

  test('the user\'s file applies, and the managed file wins over the user\'s and the project\'s', async () => {
    settings(join(home, '.sage', 'settings.json'), 7);
    expect((await admitted()).interactionTimeoutMs).toBe(7000);
    settings(join(project, '.sage', 'settings.json'), 3);
    trustFolder(home, project);
    expect((await admitted()).interactionTimeoutMs).toBe(3000);
    const managed = join(dir, 'managed.json');
    settings(managed, 2.5);
    vi.stubEnv('SAGE_MANAGED_SETTINGS', managed);
    expect((await admitted()).interactionTimeoutMs).toBe(2500);
  });

  test('a web run takes it from the host\'s settings the server reads, none when it reads none', async () => {
    settings(join(home, '.sage', 'settings.json'), 4);
    const web = (policy: ServerPolicy) => createRunFactory({ store, home, server: { policy } }).admitRun({
      task: 't', surface: 'web', model: model(), cwd: project,
      ...serverGatedRequest({ permissionMode: 'default', role: 'user' }, policy),
    });
    expect((await web(new ServerPolicy({ settings: { home } }))).interactionTimeoutMs).toBe(4000);
    expect((await web(new ServerPolicy())).interactionTimeoutMs).toBeUndefined();
  });
});
