import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../../durable/durable-runner.js';
import type { RunEvent } from '../../events/index.js';
import type { InteractionRequest, InteractionResponder } from '../../interaction/index.js';
import { createRunFactory, type RunRequest } from '../../runtime/create-run.js';
import { openSqliteStore } from '../../store/open-store.js';
import type { Store } from '../../store/index.js';
import { startFakeOpenAI, type FakeProviderServer, type FakeReply, type RecordedRequest } from '../../testing/fake-providers/index.js';
import { codexHomeFor, functionOutputs, pinnedBin, planMarker } from './test-support/codex-home.js';

/**
 * The real Codex CLI (the pinned @openai/codex, `codex app-server`) as a Sage run's worker, offline
 * against a loopback fake of the OpenAI Responses API, inside Sage's sandbox. Each test plays one
 * `exec_command` call (Codex wraps every command as `/bin/bash -lc '…'`) and checks what the person
 * saw, what Codex ran, and what reached the model.
 */
const codex = await pinnedBin('codex');
let dir: string;
let home: string;
let project: string;
let store: Store;
let fake: FakeProviderServer;
/** The tool call the fake model makes for a task, by the marker in the task's text. */
const plans = new Map<string, { name: string; input: Record<string, unknown> }>();

beforeAll(async () => {
  if (!codex) return;
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-codex-cli-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(join(project, 'vault'), { recursive: true });
  mkdirSync(join(project, 'protected'), { recursive: true });
  writeFileSync(join(project, 'vault', 'key'), 'vault-secret-do-not-leak\n');
  writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)', 'Read(./vault/**)', 'Write(./protected/**)'] } }));
  store = await openSqliteStore(':memory:');
  fake = await startFakeOpenAI({
    whenEmpty: (request): FakeReply => {
      const outputs = functionOutputs(request);
      if (outputs.length > 0) return { text: `FAKE_DONE ${outputs.at(-1)}` };
      const key = planMarker(request);
      const plan = key ? plans.get(key) : undefined;
      return plan ? { toolCalls: [{ id: `call_${key}`, name: plan.name, input: plan.input }] } : { text: `FAKE_TEXT ${key ?? ''}` };
    },
  });
  codexHomeFor(home, fake.url);
});

afterAll(async () => {
  await fake?.close();
  await store?.close();
  // Codex may still be writing its session files as it exits: retry on ENOTEMPTY.
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

function responder(answer: (request: InteractionRequest) => Record<string, unknown> | undefined, asked: InteractionRequest[]): InteractionResponder {
  return {
    deliver(request, broker) {
      asked.push(request);
      const response = answer(request);
      if (response) void broker.respond({ requestId: request.id, ...response });
    },
  };
}

interface Played {
  outcome: Awaited<Awaited<ReturnType<DurableRunner['start']>>['outcome']>;
  events: RunEvent[];
  asked: InteractionRequest[];
  requests: RecordedRequest[];
}

async function play(
  key: string,
  cmd: string | { name: string; input: Record<string, unknown> } | undefined,
  answer: (r: InteractionRequest) => Record<string, unknown> | undefined,
  options: {
    resumeSession?: string;
    extra?: Partial<RunRequest>;
    during?: (run: Awaited<ReturnType<DurableRunner['start']>>, events: RunEvent[]) => void;
    /** Another home folder (its own CODEX_HOME) for this run. */
    home?: string;
    sandbox?: 'off';
  } = {},
): Promise<Played> {
  const runHome = options.home ?? home;
  if (cmd !== undefined) plans.set(key, typeof cmd === 'string' ? { name: 'exec_command', input: { cmd } } : cmd);
  const before = fake.requests.length;
  const events: RunEvent[] = [];
  const asked: InteractionRequest[] = [];
  const runId = `run_codex_cli_${key}`;
  const factory = createRunFactory({ store, home: runHome, terminal: { runId, responder: responder(answer, asked), onEvent: (e) => events.push(e) } });
  const runner = new DurableRunner({ store, runtime: factory });
  await runner.open();
  try {
    const task = `PLAN:${key} please do it`;
    const spec = await factory.admitRun({
      task,
      surface: 'terminal',
      model: 'agent:codex',
      cwd: project,
      oneTask: true,
      agent: {
        name: 'codex',
        command: [codex!, 'app-server'],
        env: { HOME: runHome, CODEX_HOME: join(runHome, '.codex'), OPENAI_API_KEY: 'sk-fake' },
        ...(options.resumeSession ? { resumeSession: options.resumeSession } : {}),
        ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      },
      ...options.extra,
    });
    const handle = await runner.start(task, { ...spec, runId });
    options.during?.(handle, events);
    const outcome = await handle.outcome;
    return { outcome, events, asked, requests: fake.requests.slice(before) };
  } finally {
    await runner.close();
  }
}

const askedCommands = (played: Played) => played.asked.map((a) => (a as { input?: { command?: string } }).input?.command);
/** What the model read back for its call: the function_call_output Codex sent. */
const outputOf = (played: Played, key: string) => played.requests.flatMap((r) => functionOutputs(r, `call_${key}`)).at(-1);

describe.skipIf(!codex)('Codex through Sage\'s gate (the real CLI, offline)', { timeout: 90_000 }, () => {
  test('an ask answered allow: the person sees the command without Codex\'s bash -lc, Codex runs it, the run records it', async () => {
    const played = await play('allow', 'touch allowed.txt', () => ({ kind: 'confirm', confirmed: true }));
    expect(played.outcome.status).toBe('completed');
    expect(askedCommands(played)).toEqual(['touch allowed.txt']);
    expect(existsSync(join(project, 'allowed.txt'))).toBe(true);
    expect(outputOf(played, 'allow')).toContain('exited with code 0');
    expect(played.events.find((e) => e.type === 'agent.sandbox')?.data).toMatchObject({ sandbox: 'on' });
    // Codex's token use (two model requests: the call, then the answer) is the run's.
    expect(played.outcome.usage.inputTokens).toBeGreaterThan(0);
    expect(played.outcome.usage.outputTokens).toBeGreaterThan(0);
    expect(played.outcome.toolHistory).toEqual([
      expect.objectContaining({ toolCallId: 'call_allow', name: 'Bash', decision: expect.objectContaining({ behavior: 'allow', source: 'user' }), result: expect.objectContaining({ isError: false }) }),
    ]);
  });

  test('a shell the model picks (sh -c) is unwrapped too: the person sees the script alone', async () => {
    const played = await play('sh', { name: 'exec_command', input: { cmd: 'touch by-sh.txt', shell: '/bin/sh', login: false } }, () => ({ kind: 'confirm', confirmed: true }));
    expect(askedCommands(played)).toEqual(['touch by-sh.txt']);
    expect(existsSync(join(project, 'by-sh.txt'))).toBe(true);
  });

  test('an ask answered deny: nothing runs and Codex tells its model it was rejected', async () => {
    const played = await play('deny', 'touch denied.txt', () => ({ kind: 'confirm', confirmed: false, message: 'not today' }));
    expect(played.outcome.status).toBe('completed');
    expect(played.asked).toHaveLength(1);
    expect(existsSync(join(project, 'denied.txt'))).toBe(false);
    expect(outputOf(played, 'deny')).toContain('rejected');
    expect(played.outcome.toolHistory).toEqual([expect.objectContaining({ toolCallId: 'call_deny', decision: expect.objectContaining({ behavior: 'deny' }), result: expect.objectContaining({ isError: true }) })]);
  });

  test('edit then allow: Codex cannot run a changed command, so the edit declines it and neither command runs', async () => {
    const played = await play('edit', 'touch original.txt', () => ({ kind: 'confirm', confirmed: true, updatedInput: { command: 'touch edited.txt' } }));
    expect(played.outcome.status).toBe('completed');
    expect(played.asked).toHaveLength(1);
    expect(existsSync(join(project, 'original.txt'))).toBe(false);
    expect(existsSync(join(project, 'edited.txt'))).toBe(false);
    expect(outputOf(played, 'edit')).toContain('rejected');
  });

  test.each([
    ['rm', 'rm -f victim-1.txt', 'victim-1.txt'],
    ['nested', "bash -c 'rm -f victim-2.txt'", 'victim-2.txt'],
    ['chained', 'ls && rm -f victim-3.txt', 'victim-3.txt'],
    ['quoted', "r''m -f victim-4.txt", 'victim-4.txt'],
    // The model may pick the shell: Codex then sends `/usr/bin/sh -c '…'`.
    ['sh', { name: 'exec_command', input: { cmd: 'rm -f victim-5.txt', shell: '/bin/sh', login: false } }, 'victim-5.txt'],
  ] as const)('a Sage deny rule stops Codex\'s shell command inside its bash -lc (%s): nobody is asked, nothing is removed', async (key, cmd, victim) => {
    writeFileSync(join(project, victim), 'keep');
    const played = await play(`rule_${key}`, cmd, () => ({ kind: 'confirm', confirmed: true }));
    expect(played.outcome.status).toBe('completed');
    expect(played.asked).toHaveLength(0);
    expect(existsSync(join(project, victim))).toBe(true);
    expect(played.events).toContainEqual(expect.objectContaining({ type: 'permission.decided', data: expect.objectContaining({ behavior: 'deny', rule: 'Bash(rm *)' }) }));
    expect(outputOf(played, `rule_${key}`)).toContain('rejected');
  });

  test('a Read deny rule stops Codex\'s cat of a denied file: nobody is asked, the secret never reaches the model', async () => {
    const played = await play('read', 'cat vault/key', () => ({ kind: 'confirm', confirmed: true }));
    expect(played.outcome.status).toBe('completed');
    expect(played.asked).toHaveLength(0);
    expect(JSON.stringify(played.requests.map((r) => r.body))).not.toContain('vault-secret-do-not-leak');
    expect(played.outcome.toolHistory).toEqual([
      expect.objectContaining({ toolCallId: 'call_read', input: { command: 'cat vault/key' }, decision: expect.objectContaining({ behavior: 'deny', rule: 'Read(./vault/**)' }) }),
    ]);
  });

  test('a read the gate cannot see through, approved by the person, still finds the denied file masked by the sandbox', async () => {
    const played = await play('indirect', 'cat "$(printf vau)lt/key"', () => ({ kind: 'confirm', confirmed: true }));
    expect(played.outcome.status).toBe('completed');
    expect(played.asked).toHaveLength(1);
    expect(played.events.find((e) => e.type === 'agent.sandbox')?.data).toMatchObject({ masked: [join(project, 'vault', 'key')] });
    expect(outputOf(played, 'indirect')).toContain('exited with code 0');
    expect(JSON.stringify(played.requests.map((r) => r.body))).not.toContain('vault-secret-do-not-leak');
  });

  test('a new file (apply_patch): the person approves a Write of that path, Codex creates it; a Write deny rule declines one unasked', async () => {
    const patch = (path: string, text: string) => `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${path}\n+${text}\n*** End Patch\nEOF\n`;
    const made = await play('newfile', patch('made.txt', 'hello from codex'), () => ({ kind: 'confirm', confirmed: true }));
    expect(made.outcome.status).toBe('completed');
    expect(made.asked.map((a) => a.toolName)).toEqual(['Write']);
    expect(made.asked[0]).toMatchObject({ input: expect.objectContaining({ file_path: join(project, 'made.txt') }) });
    expect(existsSync(join(project, 'made.txt'))).toBe(true);
    const refused = await play('protected', patch('protected/x.txt', 'no'), () => ({ kind: 'confirm', confirmed: true }));
    expect(refused.asked).toHaveLength(0);
    expect(existsSync(join(project, 'protected', 'x.txt'))).toBe(false);
    expect(refused.events).toContainEqual(expect.objectContaining({ type: 'permission.decided', data: expect.objectContaining({ behavior: 'deny', rule: 'Write(./protected/**)' }) }));
  });

  test('a follow-up continues Codex\'s thread: the second run resumes it and its model sees the first task', async () => {
    const first = await play('first', undefined, () => undefined);
    expect(first.outcome.status).toBe('completed');
    const session = first.events.find((e) => e.type === 'agent.session')?.data as { sessionId?: string } | undefined;
    expect(session?.sessionId).toBeTruthy();
    const second = await play('second', undefined, () => undefined, { resumeSession: session!.sessionId! });
    expect(second.outcome.status).toBe('completed');
    expect(second.outcome.finalText).toContain('FAKE_TEXT second');
    expect((second.events.find((e) => e.type === 'agent.session')?.data as { sessionId?: string }).sessionId).toBe(session!.sessionId);
    expect(JSON.stringify(second.requests.at(-1)?.body.input)).toContain('PLAN:first');
  });

  test('cancel while an ask is pending: the run is cancelled, the ask closed, nothing ran', async () => {
    const played = await play('cancel', 'touch never.txt', () => undefined, {
      during: (handle, events) => {
        const timer = setInterval(() => {
          if (events.some((e) => e.type === 'interaction.requested')) {
            clearInterval(timer);
            handle.run.cancel('the person stopped it');
          }
        }, 20);
      },
    });
    expect(played.outcome.status).toBe('cancelled');
    expect(played.events.some((e) => e.type === 'interaction.cancelled')).toBe(true);
    expect(existsSync(join(project, 'never.txt'))).toBe(false);
  });

  test('the sandbox: a write outside the run\'s folder that the person approved still fails', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside, { recursive: true });
    const played = await play('outside', `touch ${join(outside, 'planted.txt')}`, () => ({ kind: 'confirm', confirmed: true }));
    expect(played.outcome.status).toBe('completed');
    expect(played.asked).toHaveLength(1);
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    expect(outputOf(played, 'outside')).toMatch(/Read-only file system|Permission denied|No such file/);
  });

  test('a config.toml write the person approved is refused by the sandbox: the follow-up\'s Codex starts no planted MCP server and runs no planted notify', async () => {
    const own = join(dir, 'home-planted');
    const config = join(codexHomeFor(own, fake.url), 'config.toml');
    const original = readFileSync(config, 'utf8');
    const notified = join(project, 'planted-notify');
    const started = join(project, 'planted-mcp');
    const plant = [
      `sed -i '1i notify = ["touch", "${notified}"]' ${config}`,
      `printf '[mcp_servers.planted]\\ncommand = "touch"\\nargs = ["${started}"]\\n' >> ${config}`,
    ].join(' ; ');
    const first = await play('plant', plant, () => ({ kind: 'confirm', confirmed: true }), { home: own });
    expect(first.outcome.status).toBe('completed');
    expect(first.asked).toHaveLength(1);
    expect(outputOf(first, 'plant')).toMatch(/Read-only file system|Permission denied|Device or resource busy/);
    expect(readFileSync(config, 'utf8')).toBe(original);
    const session = (first.events.find((e) => e.type === 'agent.session')?.data as { sessionId: string }).sessionId;
    const second = await play('after_plant', undefined, () => undefined, { home: own, resumeSession: session });
    expect(second.outcome.status).toBe('completed');
    expect(second.outcome.finalText).toContain('FAKE_TEXT after_plant');
    expect(existsSync(notified)).toBe(false);
    expect(existsSync(started)).toBe(false);
    expect(JSON.stringify(second.requests.map((r) => r.body.tools))).not.toContain('planted');
  });

  test('the person\'s own config.toml (approval_policy never, an MCP server, notify) does not loosen a Sage run', async () => {
    const own = join(dir, 'home-loose');
    const config = join(codexHomeFor(own, fake.url), 'config.toml');
    const notified = join(project, 'own-notify');
    const started = join(project, 'own-mcp');
    writeFileSync(config, [
      'approval_policy = "never"',
      `notify = ["touch", "${notified}"]`,
      readFileSync(config, 'utf8'),
      '[mcp_servers.own]',
      'command = "touch"',
      `args = ["${started}"]`,
      '',
    ].join('\n'));
    const played = await play('loose', 'touch loose.txt', () => ({ kind: 'confirm', confirmed: false, message: 'no' }), { home: own });
    expect(played.outcome.status).toBe('completed');
    expect(askedCommands(played)).toEqual(['touch loose.txt']);
    expect(existsSync(join(project, 'loose.txt'))).toBe(false);
    expect(existsSync(notified)).toBe(false);
    expect(existsSync(started)).toBe(false);
    expect(JSON.stringify(played.requests.map((r) => r.body.tools))).not.toContain('mcp__own');
  });

  test('outside the sandbox (--sandbox off) Codex reads its own config.toml, but the MCP servers named there are turned off', async () => {
    const own = join(dir, 'home-unsandboxed');
    const config = join(codexHomeFor(own, fake.url), 'config.toml');
    const started = join(project, 'unsandboxed-mcp');
    writeFileSync(config, `${readFileSync(config, 'utf8')}[mcp_servers.own]\ncommand = "touch"\nargs = ["${started}"]\n`);
    const played = await play('unsandboxed', undefined, () => undefined, { home: own, sandbox: 'off' });
    expect(played.outcome.status).toBe('completed');
    expect(played.events.find((e) => e.type === 'agent.sandbox')?.data).toMatchObject({ sandbox: 'off' });
    expect(existsSync(started)).toBe(false);
  });
});
