import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { claudeBinary, OFFLINE_ENV } from '../agents/claude-code/test-support/claude-binary.js';
import { ServerPolicy } from '../runtime/server-policy.js';
import { startFakeAnthropic, type FakeProviderServer, type FakeReply, type RecordedRequest } from '../testing/fake-providers/index.js';
import { eventually, startHarness, type Harness } from './test-support/harness.js';

/**
 * POST /runs `agent`: an external coding agent started from the web, only when the operator lists it,
 * with the host's command for it; its asks are answered like any other (POST /interactions/:id/respond).
 * The real Claude Code CLI, offline against the loopback Messages API fake.
 */
let home: string;
let fake: FakeProviderServer;
let h: Harness;
let closed: Harness | undefined;

function lastUserText(request: RecordedRequest): { result?: boolean; text: string } {
  const messages = (request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const blocks = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : ((last?.content as Array<Record<string, unknown>>) ?? []);
  return { result: blocks.some((b) => b.type === 'tool_result'), text: blocks.map((b) => (typeof b.text === 'string' ? b.text : '')).join(' ') };
}

beforeAll(async () => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'sage-agent-web-')));
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(join(home, '.claude'), { recursive: true });
  fake = await startFakeAnthropic({
    whenEmpty: (request): FakeReply => {
      const last = lastUserText(request);
      if (last.result) return { text: 'FAKE_DONE' };
      if (last.text.includes('PLAN:web')) return { toolCalls: [{ id: 'toolu_web', name: 'Bash', input: { command: 'touch from-web.txt' } }] };
      return { text: 'ok' };
    },
  });
  // The host's settings say how its Claude Code runs (here: offline, against the fake).
  writeFileSync(
    join(home, '.sage', 'settings.json'),
    JSON.stringify({ agents: { 'claude-code': { command: [claudeBinary()], env: { ...OFFLINE_ENV, ANTHROPIC_BASE_URL: fake.url.replace(/\/v1$/, ''), HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') } } } }),
  );
  h = await startHarness({ home, serverPolicy: new ServerPolicy({ agents: ['claude-code'], settings: { home } }) });
});
afterAll(async () => {
  await h?.close();
  await closed?.close();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('POST /runs with an external agent', { timeout: 60_000 }, () => {
  test('an allowed agent runs with the host\'s command; its ask is answered in the API and the call runs', async () => {
    const started = await h.api('alice', 'POST', '/runs', { task: 'PLAN:web make a file', agent: 'claude-code' });
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    const pending = await eventually(async () => (await h.store.listInteractions({ runId })).find((i) => i.kind === 'confirm' && i.status === 'pending'));
    expect(pending.request).toMatchObject({ toolName: 'Bash', input: expect.objectContaining({ command: 'touch from-web.txt' }) });
    const answered = await h.api('alice', 'POST', `/interactions/${encodeURIComponent(pending.id)}/respond`, { kind: 'confirm', confirmed: true });
    expect(answered.status).toBe(200);
    const run = await eventually(async () => {
      const r = await h.store.getRun(runId);
      return r && r.status !== 'running' ? r : undefined;
    }, 30_000);
    expect(run).toMatchObject({ status: 'completed', finalText: 'FAKE_DONE' });
    expect(existsSync(join(h.dir, 'from-web.txt'))).toBe(true);
  });

  test('an agent the operator did not list is refused (403 naming agent), and agent with model is a 400', async () => {
    const refused = await h.api('alice', 'POST', '/runs', { task: 'x', agent: 'gemini' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'policy_forbidden', field: 'agent' });
    const both = await h.api('alice', 'POST', '/runs', { task: 'x', agent: 'claude-code', model: h.script([{ text: 'hi' }]) });
    expect(both.status).toBe(400);
    expect(both.body.error.field).toBe('model');
    closed = await startHarness({ home });
    const none = await closed.api('alice', 'POST', '/runs', { task: 'x', agent: 'claude-code' });
    expect(none.status).toBe(403);
    expect(none.body.error.message).toContain('allows none');
    expect(await closed.store.listRuns()).toEqual([]);
  });

  test('a client\'s "sandbox": "off" is refused (403 naming sandbox, no run stored) unless the operator allowed unconfined agents', async () => {
    const before = (await h.store.listRuns()).length;
    const refused = await h.api('alice', 'POST', '/runs', { task: 'x', agent: 'claude-code', sandbox: 'off' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'policy_forbidden', field: 'sandbox' });
    expect(refused.body.error.message).toContain('--allow-unsandboxed-agents');
    const bad = await h.api('alice', 'POST', '/runs', { task: 'x', agent: 'claude-code', sandbox: 'no' });
    expect(bad.status).toBe(400);
    const alone = await h.api('alice', 'POST', '/runs', { task: 'x', sandbox: 'on' });
    expect(alone.status).toBe(400);
    expect((await h.store.listRuns()).length).toBe(before);
    const open = await startHarness({ home, serverPolicy: new ServerPolicy({ agents: ['claude-code'], unsandboxedAgents: true, settings: { home } }) });
    try {
      const started = await open.api('alice', 'POST', '/runs', { task: 'say ok', agent: 'claude-code', sandbox: 'off' });
      expect(started.status).toBe(201);
      const run = await open.store.getRun(started.body.id as string);
      expect((run?.options as { agent?: { sandbox?: string } }).agent?.sandbox).toBe('off');
    } finally {
      await open.close();
    }
  });
});
