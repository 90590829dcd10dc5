import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, type Harness } from './test-support/harness.js';
import { startFakeAnthropic, type FakeProviderServer } from '../testing/fake-providers/index.js';

/**
 * Web runs, built by the run factory: the host's user settings apply to
 * a run started from the web page, and a web run's model gets the system prompt with the
 * project's instructions, as a terminal run does.
 */
const sageHome = mkdtempSync(join(tmpdir(), 'sage-web-runs-home-'));
let fake: FakeProviderServer;
let h: Harness;
const saved = { ...process.env };

beforeAll(async () => {
  mkdirSync(join(sageHome, '.sage'), { recursive: true });
  writeFileSync(join(sageHome, '.sage', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)'] } }));
  fake = await startFakeAnthropic();
  process.env['SAGE_HOME'] = sageHome;
  process.env['ANTHROPIC_API_KEY'] = 'test-key';
  process.env['ANTHROPIC_BASE_URL'] = fake.url;
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
  await fake.close();
  process.env = saved;
  rmSync(sageHome, { recursive: true, force: true });
});

describe('a web run built by the run factory', () => {
  test('started where the user settings deny Bash(rm *), is denied rm -rf build (the folder stays)', async () => {
    mkdirSync(join(h.dir, 'build'));
    const model = h.script([{ toolCalls: [{ name: 'Bash', input: { command: 'rm -rf build' } }] }, { text: 'tried' }]);
    const started = await h.api('alice', 'POST', '/runs', { task: 'clean up', model, permissionMode: 'acceptEdits' });
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    const decided = await eventually(async () => (await h.store.readEvents(runId, { afterSeq: 0 })).find((e) => e.type === 'permission.decided'));
    expect(decided.data).toMatchObject({ toolName: 'Bash', behavior: 'deny' });
    expect(String((decided.data as { rule?: string }).rule ?? (decided.data as { reason?: string }).reason)).toContain('rm');
    expect(existsSync(join(h.dir, 'build'))).toBe(true);
    // Denied outright, never asked (the only request is the web run's next-message ask).
    expect((await h.store.listInteractions({ runId })).filter((i) => i.kind === 'confirm')).toEqual([]);
  });

  test("sends the system prompt, with the project's AGENTS.md, in its first model request", async () => {
    writeFileSync(join(h.dir, 'AGENTS.md'), 'Marker: always run the linter before committing.\n');
    fake.enqueue({ text: 'hello' });
    const started = await h.api('alice', 'POST', '/runs', { task: 'say hello', model: 'anthropic:claude-sonnet-4-5' });
    expect(started.status).toBe(201);
    const first = await eventually(() => fake.requests[0]);
    const system = JSON.stringify(first.body.system);
    expect(system).toContain('Marker: always run the linter before committing.');
    expect(system).toContain(h.dir);
    const stored = await h.store.getRun(started.body.id as string);
    expect(stored?.options).toMatchObject({ version: 2, origin: { surface: 'web', startedBy: 'alice' } });
  });
});
