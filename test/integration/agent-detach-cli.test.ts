// `sage run --agent claude-code --detach`: the real Claude Code CLI (pinned devDependency) driven by the
// detached `sage runs resume` process of the built `sage` (dist/cli/bin.js; npm run build first),
// offline against a loopback fake of the Messages API. The person answers from another process
// (`sage respond`, `sage runs cancel`): the answer must reach the agent held by the driving process.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeBinary } from '../../src/agents/claude-code/test-support/claude-binary.js';
import { lastUserBlocks } from '../../src/agents/claude-code/test-support/messages.js';
import { openSqliteStore } from '../../src/store/open-store.js';
import type { InteractionRecord, RunRecord, Store } from '../../src/store/index.js';
import { startFakeAnthropic, type FakeProviderServer, type FakeReply } from '../../src/testing/fake-providers/index.js';
import { runCli } from '../support/cli.js';

let dir: string;
let project: string;
let db: string;
let store: Store;
let fake: FakeProviderServer;
const claude = claudeBinary();
const plans = new Map<string, { name: string; input: Record<string, unknown> }>();

function resultText(block: Record<string, unknown>): string {
  const content = block.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((c: { text?: string }) => c.text ?? '').join('') : '';
}

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-agent-detach-')));
  project = join(dir, 'project');
  mkdirSync(project);
  mkdirSync(join(dir, '.claude'));
  db = join(dir, 'sage.db');
  fake = await startFakeAnthropic({
    whenEmpty: (request): FakeReply => {
      const blocks = lastUserBlocks(request);
      const result = blocks.find((b) => b.type === 'tool_result');
      if (result) return { text: `FAKE_DONE is_error=${result.is_error === true} result=${resultText(result)}` };
      for (const block of blocks) {
        const marker = typeof block.text === 'string' ? /PLAN:(\w+)/.exec(block.text) : null;
        const plan = marker ? plans.get(marker[1]!) : undefined;
        if (plan) return { toolCalls: [{ id: `toolu_${marker![1]}`, name: plan.name, input: plan.input }] };
      }
      return { text: 'ok' };
    },
  });
  store = await openSqliteStore(db);
});

afterAll(async () => {
  await fake?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const env = () => ({
  SAGE_HOME: dir,
  SAGE_DATABASE_URL: '',
  HOME: dir,
  CLAUDE_CONFIG_DIR: join(dir, '.claude'),
  ANTHROPIC_BASE_URL: fake.url.replace(/\/v1$/, ''),
  ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-offline-tests',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
});
const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: project, env: env(), timeoutMs: 90_000 });

type Probe<T> = () => T | undefined | Promise<T | undefined>;

async function until<T>(what: string, probe: Probe<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Processes of this user whose command line holds every one of `parts` (read from /proc). */
function processesWith(...parts: string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (parts.every((p) => cmdline.includes(p))) found.push(Number(entry));
  }
  return found;
}

/** Starts `PLAN:key` detached and waits for the agent's permission request in the store. */
async function detachedAsk(key: string, command: string): Promise<{ runId: string; ask: InteractionRecord }> {
  plans.set(key, { name: 'Bash', input: { command } });
  return startDetached(['--agent', 'claude-code', '--agent-command', claude], `PLAN:${key} please do it`, command);
}

async function startDetached(
  agent: string[],
  task: string,
  command: string,
  extraEnv: Record<string, string> = {},
): Promise<{ runId: string; ask: InteractionRecord }> {
  const args = ['run', ...agent, '--detach', '--json', task, '--db', db];
  const started = await runCli(args, { cwd: project, env: { ...env(), ...extraEnv }, timeoutMs: 90_000 });
  expect(started.stderr).toBe('');
  expect(started.code).toBe(0);
  const { runId } = JSON.parse(started.stdout) as { runId: string };
  const ask = await until("the agent's permission request", async () => {
    return (await store.listInteractions({ runId, status: ['pending'] }))[0];
  });
  expect(ask.request).toMatchObject({ kind: 'confirm', toolName: 'Bash', input: expect.objectContaining({ command }) });
  return { runId, ask };
}

const ended = (runId: string) => until(`run ${runId} to end`, async () => {
  const run = await store.getRun(runId);
  return run && ['completed', 'failed', 'cancelled'].includes(run.status) ? run : undefined;
});

async function eventTypes(runId: string): Promise<string[]> {
  return (await store.readEvents(runId, { afterSeq: 0 })).map((e) => e.type);
}

describe('a detached Claude Code run answered from another process', { timeout: 120_000 }, () => {
  it('--allow: the answer reaches the agent held by the driving process, once, and the command runs', async () => {
    const { runId, ask } = await detachedAsk('allow', 'touch detached-allowed.txt');
    const answered = await sage(['respond', ask.id, '--allow', '--json']);
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    // The answering process stores the answer and tells the holder; it does not rebuild the run.
    expect(JSON.parse(answered.stdout)).toMatchObject({ interactionId: ask.id, runId, delivered: 'notified' });
    const run: RunRecord = await ended(runId);
    expect({ status: run.status, error: run.error }).toMatchObject({ status: 'completed' });
    expect(existsSync(join(project, 'detached-allowed.txt'))).toBe(true);
    expect(run.finalText).toContain('FAKE_DONE is_error=false');
    const types = await eventTypes(runId);
    expect(types).not.toContain('run.suspended');
    expect(types.filter((t) => t === 'interaction.answered')).toHaveLength(1);
    expect(await store.getInteraction(ask.id)).toMatchObject({ status: 'answered', consumed: true });
  });

  it('--deny --message: the agent is refused with the person\'s words and nothing runs', async () => {
    const { runId, ask } = await detachedAsk('deny', 'touch detached-denied.txt');
    const answered = await sage(['respond', ask.id, '--deny', '--message', 'not on a Friday']);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain(`run ${runId}: answer handed to the process that drives it`);
    const run = await ended(runId);
    expect({ status: run.status, error: run.error }).toMatchObject({ status: 'completed' });
    expect(existsSync(join(project, 'detached-denied.txt'))).toBe(false);
    // What Claude Code sent the model as the call's result: the deny reason.
    expect(run.finalText).toContain('FAKE_DONE is_error=true');
    expect(run.finalText).toContain('not on a Friday');
    expect(await eventTypes(runId)).not.toContain('run.suspended');
  });

  it('sage runs cancel while the ask is pending: the run ends cancelled, the ask closed, the agent stops', async () => {
    const { runId, ask } = await detachedAsk('cancel', 'touch detached-never.txt');
    expect(processesWith('runs', 'resume', runId)).toHaveLength(1);
    expect(processesWith(claude, 'stream-json').length).toBeGreaterThan(0);
    const cancelled = await sage(['runs', 'cancel', runId, '--json']);
    expect(cancelled.code).toBe(0);
    const run = await ended(runId);
    expect(run.status).toBe('cancelled');
    expect(await store.getInteraction(ask.id)).toMatchObject({ status: 'cancelled' });
    // The driving process ends once the agent's process group is stopped; no Claude Code of this run is left.
    const gone = (parts: string[]) => () => (processesWith(...parts).length === 0 ? true : undefined);
    await until('the driving process to exit', gone(['runs', 'resume', runId]));
    await until('Claude Code to stop', gone([claude, 'stream-json']));
    expect(existsSync(join(project, 'detached-never.txt'))).toBe(false);
  });
});

/** The fake agents of src/agents (an ACP agent on the SDK's agent side, a Codex app-server), driven detached. */
const fakeAcp = fileURLToPath(new URL('../../src/agents/acp/test-support/fake-agent.ts', import.meta.url));
const fakeCodex = fileURLToPath(new URL('../../src/agents/codex/test-support/fake-app-server.mjs', import.meta.url));
const tsx = import.meta.resolve('tsx');
const resultsOf = (run: RunRecord) => JSON.parse(/RESULTS (.*)$/s.exec(run.finalText ?? '')?.[1] ?? 'null') as unknown;

async function acpAsk(command: string) {
  const plan = [{ permission: { kind: 'execute', title: 'Run it', rawInput: { command } } }];
  const line = `${process.execPath} --import ${tsx} ${fakeAcp}`;
  const agent = ['--agent', 'acp', '--agent-command', line, '--agent-env', 'FAKE_ACP_PLAN'];
  return startDetached(agent, 'do it', command, { FAKE_ACP_PLAN: JSON.stringify(plan) });
}

async function codexAsk(command: string) {
  const line = `${process.execPath} ${fakeCodex}`;
  const agent = ['--agent', 'codex', '--agent-command', line, '--agent-env', 'FAKE_CODEX_PLAN'];
  return startDetached(agent, 'do it', command, { FAKE_CODEX_PLAN: JSON.stringify([{ command }]) });
}

describe('detached ACP and Codex runs answered from another process', { timeout: 120_000 }, () => {
  it('ACP: --allow picks allow_once and --deny reject_once, in the agent the driving process holds', async () => {
    const allowed = await acpAsk('touch acp-allowed.txt');
    const answered = await sage(['respond', allowed.ask.id, '--allow', '--json']);
    expect(JSON.parse(answered.stdout)).toMatchObject({ delivered: 'notified' });
    const allowedRun = await ended(allowed.runId);
    expect({ status: allowedRun.status, error: allowedRun.error }).toMatchObject({ status: 'completed' });
    expect(resultsOf(allowedRun)).toEqual([{ permission: 'yes' }]);
    expect(await eventTypes(allowed.runId)).not.toContain('run.suspended');
    expect(await store.getInteraction(allowed.ask.id)).toMatchObject({ status: 'answered', consumed: true });

    const denied = await acpAsk('touch acp-denied.txt');
    expect((await sage(['respond', denied.ask.id, '--deny', '--message', 'not now', '--json'])).code).toBe(0);
    const deniedRun = await ended(denied.runId);
    expect({ status: deniedRun.status, error: deniedRun.error }).toMatchObject({ status: 'completed' });
    expect(resultsOf(deniedRun)).toEqual([{ permission: 'no' }]);
  });

  it('Codex: --allow accepts (the command runs) and --deny declines (it does not)', async () => {
    const allowed = await codexAsk('touch codex-allowed.txt');
    const answered = await sage(['respond', allowed.ask.id, '--allow', '--json']);
    expect(JSON.parse(answered.stdout)).toMatchObject({ delivered: 'notified' });
    const allowedRun = await ended(allowed.runId);
    expect({ status: allowedRun.status, error: allowedRun.error }).toMatchObject({ status: 'completed' });
    expect(resultsOf(allowedRun)).toEqual([{ decision: 'accept' }]);
    expect(existsSync(join(project, 'codex-allowed.txt'))).toBe(true);
    expect(await eventTypes(allowed.runId)).not.toContain('run.suspended');

    const denied = await codexAsk('touch codex-denied.txt');
    expect((await sage(['respond', denied.ask.id, '--deny', '--json'])).code).toBe(0);
    const deniedRun = await ended(denied.runId);
    expect({ status: deniedRun.status, error: deniedRun.error }).toMatchObject({ status: 'completed' });
    expect(resultsOf(deniedRun)).toEqual([{ decision: 'decline' }]);
    expect(existsSync(join(project, 'codex-denied.txt'))).toBe(false);
  });
});
