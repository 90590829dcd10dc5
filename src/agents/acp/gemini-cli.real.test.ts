import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../../durable/durable-runner.js';
import type { RunEvent } from '../../events/index.js';
import type { InteractionRequest } from '../../interaction/index.js';
import { createRunFactory } from '../../runtime/create-run.js';
import { openSqliteStore } from '../../store/open-store.js';
import { startFakeGeminiApi, type FakeGeminiApi, type GeminiReply, type GeminiRequest } from './test-support/fake-gemini-api.js';
import { acpCalls, recordObserved } from '../../test-support/observed.js';
import { binForSuite } from '../../test-support/real-agents.js';
import { eventsOf, runSage, until, type SageEvent } from '../../test-support/run-sage.js';

/**
 * The real Gemini CLI (pinned in test/agents/pinned.json) as the agent of `sage run --agent gemini`,
 * offline against a loopback fake of the Gemini API, inside Sage's sandbox (on by default). Each run
 * plays a list of function calls, one per model turn: the fake answers the next one once the
 * previous one's functionResponse arrives, then a text carrying every response it got.
 */
const gemini = binForSuite('gemini-cli');
let dir: string;
let project: string;
let outside: string;
let db: string;
let fake: FakeGeminiApi;
type Call = { name: string; args: Record<string, unknown> };
const plans = new Map<string, Call[]>();
/** What each run made of the program, for `npm run agents:refresh`. */
const observed: Record<string, unknown> = {};
let deniedRun: string | undefined;

function reply(request: GeminiRequest): GeminiReply {
  const contents = request.body.contents ?? [];
  const planned = (c: (typeof contents)[number]) => c.role === 'user' && c.parts?.some((p) => typeof p.text === 'string' && /PLAN:\w+/.test(p.text));
  // The last prompt carrying a plan: a follow-up's history holds the earlier one too.
  const start = contents.findLastIndex(planned);
  if (start < 0) return { text: 'ok' };
  const key = /PLAN:(\w+)/.exec(contents[start]!.parts!.map((p) => p.text ?? '').join(' '))![1]!;
  const responses = contents.slice(start).flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse);
  const next = plans.get(key)?.[responses.length];
  if (next) return { functionCall: next };
  return { text: `FAKE_DONE ${responses.map((p) => JSON.stringify(p.functionResponse!.response).slice(0, 300)).join(' | ')}` };
}

beforeAll(async () => {
  if (!gemini) return;
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-gemini-')));
  project = join(dir, 'project');
  outside = join(dir, 'outside');
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, 'secret.txt'), 'SECRET=hunter2-do-not-leak\n');
  writeFileSync(join(project, 'victim.txt'), 'keep me\n');
  db = join(dir, 'sage.db');
  fake = await startFakeGeminiApi(reply);
});

afterAll(async () => {
  if (gemini) recordObserved('gemini-cli', observed);
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

type Event = SageEvent;
/** The agent's variables (passed through by its prefixes) pointing it at the fake; Sage's home is the scratch folder. */
const agentEnv = () => ({ GOOGLE_GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: 'fake-gemini-key', GEMINI_CLI_NO_RELAUNCH: 'true' });
const env = () => ({ SAGE_HOME: dir, SAGE_DATABASE_URL: '', HOME: dir, ...agentEnv() });

async function sage(key: string, calls: Call[], args: string[]): Promise<{ code: number | null; events: Event[]; stderr: string; modelBodies: string }> {
  plans.set(key, calls);
  const before = fake.requests.length;
  const command = ['run', '--agent', 'gemini', '--agent-command', `${gemini} --acp`, '--json', ...args, '--db', db, `PLAN:${key} please do it`];
  const result = await runSage(command, { cwd: project, env: env() });
  const events = eventsOf(result.stdout);
  const requests = fake.requests.slice(before);
  observed[key] = observation(requests, events);
  return { code: result.code, events, stderr: result.stderr, modelBodies: JSON.stringify(requests.map((r) => r.body)) };
}

/** The model-API requests (method, side or turn, the function called or answered) and the ACP methods it used (from Sage's record). */
function observation(requests: GeminiRequest[], events: Array<{ type: string; data: Record<string, unknown> }>) {
  return {
    modelApi: requests.map((r) => `${r.method}${r.side ? ' (side, JSON)' : ''}`),
    acp: acpCalls(events),
  };
}
const completedOf = (events: Event[], name: string) => events.filter((e) => e.type === 'tool.completed' && e.data.toolName === name).map((e) => e.data);
const outcome = (events: Event[]) => events.find((e) => e.type === 'run.completed')?.data as { status: string; finalText: string } | undefined;

describe.skipIf(!gemini)('Gemini CLI through Sage (the real program, offline)', { timeout: 300_000 }, () => {
  test('answered allow from the terminal: the ask is allowed, deny rules hold, a new file is written, the sandbox refuses a write outside the folder', async () => {
    const run = await sage('seq', [
      { name: 'run_shell_command', args: { command: 'touch allowed.txt' } },
      { name: 'read_file', args: { file_path: join(project, 'secret.txt') } },
      { name: 'run_shell_command', args: { command: 'cat secret.txt' } },
      { name: 'run_shell_command', args: { command: 'rm -f victim.txt' } },
      { name: 'write_file', args: { file_path: join(project, 'new.txt'), content: 'brand new\n' } },
      { name: 'run_shell_command', args: { command: `echo escaped > ${join(outside, 'escaped.txt')}` } },
    ], ['--non-interactive', '--auto', 'allow', '--deny', 'Read(./secret.txt)', '--deny', 'Bash(rm *)']);
    expect(run.code).toBe(0);
    expect(outcome(run.events)?.status).toBe('completed');
    // The ask: asked once per call Gemini asks about, answered by the terminal's --auto.
    const asked = run.events.filter((e) => e.type === 'interaction.requested').map((e) => (e.data.request as { input?: unknown }).input);
    expect(asked).toContainEqual({ command: 'touch allowed.txt' });
    expect(existsSync(join(project, 'allowed.txt'))).toBe(true);
    // Read deny: Gemini reads the file itself (its read_file, and `cat`, which it counts as safe and runs
    // without asking); the sandbox masks the file, so the secret never reaches the model.
    expect(run.events).toContainEqual(expect.objectContaining({ type: 'agent.sandbox', data: expect.objectContaining({ masked: [join(project, 'secret.txt')] }) }));
    expect(run.modelBodies).not.toContain('hunter2');
    expect(completedOf(run.events, 'Read')[0]).toMatchObject({ ungated: true });
    // Bash deny: Gemini asks about `rm`, the rule refuses it without asking anyone, the file stays.
    expect(run.events).toContainEqual(expect.objectContaining({ type: 'permission.decided', data: expect.objectContaining({ toolName: 'Bash', behavior: 'deny', rule: 'Bash(rm *)' }) }));
    expect(asked).not.toContainEqual({ command: 'rm -f victim.txt' });
    expect(readFileSync(join(project, 'victim.txt'), 'utf8')).toBe('keep me\n');
    // A new file: Gemini reads it through Sage first (answered as empty), then writes it through Sage.
    expect(readFileSync(join(project, 'new.txt'), 'utf8')).toBe('brand new\n');
    expect(completedOf(run.events, 'Write')).toContainEqual(expect.objectContaining({ isError: false }));
    // The sandbox: the approved write outside the run's folder fails, the folder is not there for the agent.
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    expect(outcome(run.events)?.finalText).toMatch(/escaped\.txt: No such file or directory/);
  });

  test('answered deny from the terminal: nothing runs and the call ends refused', async () => {
    const run = await sage('deny', [{ name: 'run_shell_command', args: { command: 'touch denied.txt' } }], ['--non-interactive', '--auto', 'deny']);
    deniedRun = run.events[0]?.runId;
    expect(run.code).toBe(0);
    expect(run.events.filter((e) => e.type === 'interaction.requested')).toHaveLength(1);
    expect(existsSync(join(project, 'denied.txt'))).toBe(false);
    expect(completedOf(run.events, 'Bash')).toEqual([expect.objectContaining({ isError: true })]);
    expect(outcome(run.events)?.status).toBe('completed');
  });

  test('a follow-up (--continue) is refused before a run starts: Sage cannot continue an ACP session (session/load)', async () => {
    // The deny test's run: a run of the gemini agent with a session, in this store.
    const runId = await until('the deny test\'s run', () => deniedRun);
    const result = await runSage(['run', '--continue', runId, '--json', '--db', db, 'PLAN:followup go on'], { cwd: project, env: env() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('cannot continue an ACP agent\'s session');
    expect(result.stdout).toBe('');
  });

  test('edit then allow, then cancel while the next ask is pending: what Gemini runs, and the run cancelled with nothing more run', async () => {
    const store = await openSqliteStore(':memory:');
    plans.set('edit', [
      { name: 'run_shell_command', args: { command: 'touch original.txt' } },
      { name: 'run_shell_command', args: { command: 'touch never.txt' } },
    ]);
    const before = fake.requests.length;
    const events: RunEvent[] = [];
    const asked: InteractionRequest[] = [];
    const runId = 'run_gemini_edit';
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
      const spec = await factory.admitRun({ task, surface: 'terminal', model: 'agent:gemini', cwd: project, oneTask: true, agent: { name: 'gemini', command: [gemini!, '--acp'], env: { ...agentEnv(), HOME: dir } } });
      const handle = await runner.start(task, { ...spec, runId });
      cancel = () => handle.run.cancel('the person stopped it');
      const result = await handle.outcome;
      observed['edit'] = observation(fake.requests.slice(before), events as unknown as Event[]);
      expect(asked.map((r) => (r as { input?: unknown }).input)).toEqual([{ command: 'touch original.txt' }, { command: 'touch never.txt' }]);
      expect(result.status).toBe('cancelled');
      expect(events.some((e) => e.type === 'interaction.cancelled')).toBe(true);
      expect(existsSync(join(project, 'never.txt'))).toBe(false);
      // ACP's permission answer is an option, with no input: Gemini can only run the command it asked
      // about, so an edited approval must not let the original run as if the person had approved it.
      expect(existsSync(join(project, 'original.txt'))).toBe(false);
      expect(existsSync(join(project, 'edited.txt'))).toBe(false);
      const ended = events.filter((e) => e.type === 'tool.completed').map((e) => e.data as { isError: boolean; content: string });
      expect(ended).toEqual([expect.objectContaining({ isError: true, content: expect.stringContaining('the gemini agent can only run the call it asked about') })]);
    } finally {
      await runner.close();
      await store.close();
    }
  });
});
