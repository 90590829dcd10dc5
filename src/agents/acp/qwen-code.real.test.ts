import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../../durable/durable-runner.js';
import type { RunEvent } from '../../events/index.js';
import type { InteractionRequest } from '../../interaction/index.js';
import { createRunFactory } from '../../runtime/create-run.js';
import { openSqliteStore } from '../../store/open-store.js';
import { startFakeOpenAI, type FakeProviderServer, type FakeReply, type RecordedRequest } from '../../testing/fake-providers/index.js';
import { acpCalls, recordObserved } from '../../test-support/observed.js';
import { binForSuite } from '../../test-support/real-agents.js';
import { eventsOf, runSage, until, type SageEvent } from '../../test-support/run-sage.js';

/**
 * The real Qwen Code (pinned in test/agents/pinned.json) as the agent of `sage run --agent qwen`,
 * offline against the loopback fake of OpenAI Chat Completions, inside Sage's sandbox (on by
 * default). Each run plays a list of tool calls, one per model turn: the fake answers the next one
 * once the previous one's tool message arrives, then a text carrying every result it got.
 */
const qwen = binForSuite('qwen-code');
let dir: string;
let project: string;
let outside: string;
let db: string;
let fake: FakeProviderServer;
type Call = { name: string; input: Record<string, unknown> };
const plans = new Map<string, Call[]>();
/** What each run made of the program, for `npm run agents:refresh`. */
const observed: Record<string, unknown> = {};
let deniedRun: string | undefined;

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown[];
}
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((c: { text?: string }) => c.text ?? '').join(' ') : '';

function reply(request: RecordedRequest): FakeReply {
  const messages = (request.body?.messages ?? []) as ChatMessage[];
  const start = messages.findLastIndex((m) => m.role === 'user' && /PLAN:\w+/.test(textOf(m.content)));
  if (start < 0) return { text: 'ok' };
  const key = /PLAN:(\w+)/.exec(textOf(messages[start]!.content))![1]!;
  const results = messages.slice(start).filter((m) => m.role === 'tool');
  const next = plans.get(key)?.[results.length];
  if (next) return { toolCalls: [{ id: `call_${key}_${results.length}`, name: next.name, input: next.input }] };
  return { text: `FAKE_DONE ${results.map((m) => textOf(m.content).slice(0, 300)).join(' | ')}` };
}

beforeAll(async () => {
  if (!qwen) return;
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-qwen-')));
  project = join(dir, 'project');
  outside = join(dir, 'outside');
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, 'secret.txt'), 'SECRET=hunter2-do-not-leak\n');
  writeFileSync(join(project, 'victim.txt'), 'keep me\n');
  db = join(dir, 'sage.db');
  fake = await startFakeOpenAI({ whenEmpty: reply });
});

afterAll(async () => {
  if (qwen) recordObserved('qwen-code', observed);
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** The agent's variables (passed through by its prefixes) pointing it at the fake; Sage's home is the scratch folder. */
const agentEnv = () => ({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'fake-openai-key', OPENAI_MODEL: 'fake-qwen-model' });
const env = () => ({ SAGE_HOME: dir, SAGE_DATABASE_URL: '', HOME: dir, ...agentEnv() });

async function sage(key: string, calls: Call[], args: string[]): Promise<{ code: number | null; events: SageEvent[]; stderr: string; modelBodies: string }> {
  plans.set(key, calls);
  const before = fake.requests.length;
  const command = ['run', '--agent', 'qwen', '--agent-command', `${qwen} --acp`, '--json', ...args, '--db', db, `PLAN:${key} please do it`];
  const result = await runSage(command, { cwd: project, env: env() });
  const events = eventsOf(result.stdout);
  const requests = fake.requests.slice(before);
  observed[key] = observation(requests, events);
  return { code: result.code, events, stderr: result.stderr, modelBodies: JSON.stringify(requests.map((r) => r.body)) };
}

/** The model-API requests (path, streamed, the tool called back) and the ACP methods it used (from Sage's record). */
function observation(requests: RecordedRequest[], events: Array<{ type: string; data: Record<string, unknown> }>) {
  return {
    modelApi: requests.map((r) => `${r.path}${r.body?.stream ? ' (stream)' : ''}`),
    acp: acpCalls(events),
  };
}
const completedOf = (events: SageEvent[], name: string) => events.filter((e) => e.type === 'tool.completed' && e.data.toolName === name).map((e) => e.data);
const outcome = (events: SageEvent[]) => events.find((e) => e.type === 'run.completed')?.data as { status: string; finalText: string } | undefined;

describe.skipIf(!qwen)('Qwen Code through Sage (the real program, offline)', { timeout: 300_000 }, () => {
  test('answered allow from the terminal: the ask is allowed, deny rules hold, a new file is written, the sandbox refuses a write outside the folder', async () => {
    const run = await sage('seq', [
      { name: 'run_shell_command', input: { command: 'touch allowed.txt' } },
      { name: 'read_file', input: { file_path: join(project, 'secret.txt') } },
      { name: 'run_shell_command', input: { command: 'cat secret.txt' } },
      { name: 'run_shell_command', input: { command: 'rm -f victim.txt' } },
      { name: 'write_file', input: { file_path: join(project, 'new.txt'), content: 'brand new\n' } },
      { name: 'run_shell_command', input: { command: `echo escaped > ${join(outside, 'escaped.txt')}` } },
    ], ['--non-interactive', '--auto', 'allow', '--deny', 'Read(./secret.txt)', '--deny', 'Bash(rm *)']);
    expect(run.code).toBe(0);
    expect(outcome(run.events)?.status).toBe('completed');
    const asked = run.events.filter((e) => e.type === 'interaction.requested').map((e) => (e.data.request as { input?: unknown }).input);
    expect(asked).toContainEqual({ command: 'touch allowed.txt' });
    expect(existsSync(join(project, 'allowed.txt'))).toBe(true);
    // Read deny: Qwen's read_file reads through Sage, whose rule refuses it (the reason reaches the
    // model as Sage's text); its own `cat`, which it runs without asking, meets the sandbox's mask.
    expect(run.events).toContainEqual(expect.objectContaining({ type: 'permission.decided', data: expect.objectContaining({ toolName: 'Read', behavior: 'deny', rule: 'Read(./secret.txt)' }) }));
    expect(run.events).toContainEqual(expect.objectContaining({ type: 'agent.sandbox', data: expect.objectContaining({ masked: [join(project, 'secret.txt')] }) }));
    expect(run.modelBodies).not.toContain('hunter2');
    expect(run.modelBodies).toContain('[Sage refused this read');
    // Bash deny: the rule refuses Qwen's permission request without asking anyone; the file stays.
    expect(run.events).toContainEqual(expect.objectContaining({ type: 'permission.decided', data: expect.objectContaining({ toolName: 'Bash', behavior: 'deny', rule: 'Bash(rm *)' }) }));
    expect(asked).not.toContainEqual({ command: 'rm -f victim.txt' });
    expect(readFileSync(join(project, 'victim.txt'), 'utf8')).toBe('keep me\n');
    // A new file, written through Sage (fs/write_text_file) once the person approved it.
    expect(readFileSync(join(project, 'new.txt'), 'utf8')).toBe('brand new\n');
    expect(completedOf(run.events, 'Write')).toContainEqual(expect.objectContaining({ isError: false, content: expect.stringContaining('Wrote 10 characters') }));
    // The sandbox: the approved write outside the run's folder fails.
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    expect(outcome(run.events)?.finalText).toMatch(/escaped\.txt: No such file or directory/);
  });

  test('answered deny from the terminal: nothing runs and the call ends refused', async () => {
    const run = await sage('deny', [{ name: 'run_shell_command', input: { command: 'touch denied.txt' } }], ['--non-interactive', '--auto', 'deny']);
    deniedRun = run.events[0]?.runId;
    expect(run.code).toBe(0);
    expect(run.events.filter((e) => e.type === 'interaction.requested')).toHaveLength(1);
    expect(existsSync(join(project, 'denied.txt'))).toBe(false);
    expect(completedOf(run.events, 'Bash')).toEqual([expect.objectContaining({ isError: true })]);
    expect(outcome(run.events)?.status).toBe('completed');
  });

  test('a follow-up (--continue) is refused before a run starts: Sage cannot continue an ACP session (session/load)', async () => {
    const runId = await until('the deny test\'s run', () => deniedRun);
    const result = await runSage(['run', '--continue', runId, '--json', '--db', db, 'PLAN:followup go on'], { cwd: project, env: env() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('cannot continue an ACP agent\'s session');
    expect(result.stdout).toBe('');
  });

  test('edit then allow, then cancel while the next ask is pending: the edited approval runs nothing, the run is cancelled', async () => {
    const store = await openSqliteStore(':memory:');
    plans.set('edit', [
      { name: 'run_shell_command', input: { command: 'touch original.txt' } },
      { name: 'run_shell_command', input: { command: 'touch never.txt' } },
    ]);
    const before = fake.requests.length;
    const events: RunEvent[] = [];
    const asked: InteractionRequest[] = [];
    const runId = 'run_qwen_edit';
    let cancel: (() => void) | undefined;
    const factory = createRunFactory({
      store,
      home: dir,
      terminal: {
        runId,
        onEvent: (e) => events.push(e),
        responder: {
          deliver(request, broker) {
            asked.push(request);
            // The person edits the first command; the second ask waits until the run is cancelled.
            if (asked.length === 1) void broker.respond({ requestId: request.id, kind: 'confirm', confirmed: true, updatedInput: { command: 'touch edited.txt' } });
            else cancel?.();
          },
        },
      },
    });
    const runner = new DurableRunner({ store, runtime: factory });
    await runner.open();
    try {
      const task = 'PLAN:edit please do it';
      const spec = await factory.admitRun({ task, surface: 'terminal', model: 'agent:qwen', cwd: project, oneTask: true, agent: { name: 'qwen', command: [qwen!, '--acp'], env: { ...agentEnv(), HOME: dir } } });
      const handle = await runner.start(task, { ...spec, runId });
      cancel = () => handle.run.cancel('the person stopped it');
      const result = await handle.outcome;
      observed['edit'] = observation(fake.requests.slice(before), events as unknown as SageEvent[]);
      expect(asked.map((r) => (r as { input?: unknown }).input)).toEqual([{ command: 'touch original.txt' }, { command: 'touch never.txt' }]);
      expect(result.status).toBe('cancelled');
      expect(events.some((e) => e.type === 'interaction.cancelled')).toBe(true);
      expect(existsSync(join(project, 'never.txt'))).toBe(false);
      // ACP's permission answer is an option, with no input: neither the original nor the edit ran.
      expect(existsSync(join(project, 'original.txt'))).toBe(false);
      expect(existsSync(join(project, 'edited.txt'))).toBe(false);
      const ended = events.filter((e) => e.type === 'tool.completed').map((e) => e.data as { isError: boolean; content: string });
      expect(ended).toEqual([expect.objectContaining({ isError: true, content: expect.stringContaining('the qwen agent can only run the call it asked about') })]);
    } finally {
      await runner.close();
      await store.close();
    }
  });
});
