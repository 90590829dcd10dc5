import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../../durable/durable-runner.js';
import type { RunEvent } from '../../events/index.js';
import type { InteractionRequest, InteractionResponder } from '../../interaction/index.js';
import { createRunFactory, type RunRequest } from '../../runtime/create-run.js';
import { openSqliteStore } from '../../store/open-store.js';
import type { Store } from '../../store/index.js';

/**
 * An ACP agent (our fake, on the SDK's agent side) as a run's worker: its permission requests reach
 * Sage's gate and people; its file and shell access through the client capabilities is Sage's to
 * allow; a file outside the session's folders is refused without asking.
 */
const fakeAgent = fileURLToPath(new URL('./test-support/fake-agent.ts', import.meta.url));
/** tsx by its absolute URL: the agent runs in the project's folder, where no node_modules is. */
const tsx = import.meta.resolve('tsx');
let dir: string;
let home: string;
let project: string;
let outside: string;
let store: Store;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-acp-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  outside = join(dir, 'outside');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, 'notes.txt'), 'hello from the project\n');
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  symlinkSync(outside, join(project, 'link-out'));
  writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)'] } }));
  store = await openSqliteStore(':memory:');
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Played {
  status: string;
  results: Array<Record<string, unknown>>;
  asked: InteractionRequest[];
  events: RunEvent[];
  finalText: string;
  toolCalls: number;
}

async function play(key: string, plan: unknown[], answer: (r: InteractionRequest) => Record<string, unknown> | undefined, during?: (cancel: () => void, events: RunEvent[]) => void, extra: Partial<RunRequest> & { preset?: string } = {}): Promise<Played> {
  const { preset = 'acp', ...rest } = extra;
  const asked: InteractionRequest[] = [];
  const events: RunEvent[] = [];
  const runId = `run_acp_${key}`;
  const responder: InteractionResponder = {
    deliver(request, broker) {
      asked.push(request);
      const response = answer(request);
      if (response) void broker.respond({ requestId: request.id, ...response });
    },
  };
  const factory = createRunFactory({ store, home, terminal: { runId, responder, onEvent: (e) => events.push(e) } });
  const runner = new DurableRunner({ store, runtime: factory });
  await runner.open();
  try {
    const spec = await factory.admitRun({ task: 'do it',
      surface: 'terminal',
      model: 'agent:acp',
      cwd: project,
      oneTask: true,
      agent: { name: preset, command: [process.execPath, '--import', tsx, fakeAgent], env: { FAKE_ACP_PLAN: JSON.stringify(plan) } },
      ...rest,
    });
    const handle = await runner.start('do it', { ...spec, runId });
    during?.(() => handle.run.cancel('the person stopped it'), events);
    const outcome = await handle.outcome;
    const match = /RESULTS (.*)$/s.exec(outcome.finalText);
    return { status: outcome.status, results: match ? (JSON.parse(match[1]!) as Array<Record<string, unknown>>) : [], asked, events, finalText: outcome.finalText, toolCalls: outcome.stats.toolCalls };
  } finally {
    await runner.close();
  }
}

describe('an ACP agent through Sage\'s gate', { timeout: 30_000 }, () => {
  test('a permission request is asked of the person: allow picks allow_once, deny picks reject_once', async () => {
    const allowed = await play('allow', [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch x.txt' } } }], () => ({ kind: 'confirm', confirmed: true }));
    expect(allowed.status).toBe('completed');
    expect(allowed.asked).toEqual([expect.objectContaining({ toolName: 'Bash', input: { command: 'touch x.txt' } })]);
    expect(allowed.results).toEqual([{ permission: 'yes' }]);
    const denied = await play('deny', [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch y.txt' } } }], () => ({ kind: 'confirm', confirmed: false, message: 'no' }));
    expect(denied.results).toEqual([{ permission: 'no' }]);
    expect(denied.events).toContainEqual(expect.objectContaining({ type: 'agent.session' }));
  });

  test('an approval with an edited input refuses the agent\'s call: ACP answers with an option, so the agent would run its own form', async () => {
    const played = await play('edited', [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch asked.txt' } } }], () => ({ kind: 'confirm', confirmed: true, updatedInput: { command: 'touch edited.txt' } }));
    expect(played.status).toBe('completed');
    expect(played.results).toEqual([{ permission: 'no' }]);
    const ended = played.events.filter((e) => e.type === 'tool.completed').map((e) => e.data as { isError: boolean; content: string });
    expect(ended).toEqual([expect.objectContaining({ isError: true, content: expect.stringContaining('can only run the call it asked about') })]);
  });

  test('the agent\'s file access is Sage\'s: a read inside is served, a write outside (also through a symlink or ..) is refused without asking', async () => {
    const played = await play(
      'files',
      [
        { read: join(project, 'notes.txt') },
        { read: join(outside, 'secret.txt') },
        { read: join(project, 'link-out', 'secret.txt') },
        { write: { path: join(project, '..', 'outside', 'planted.txt'), content: 'x' } },
        { write: { path: join(project, 'made.txt'), content: 'made by the agent' } },
      ],
      () => ({ kind: 'confirm', confirmed: true }),
    );
    expect(played.status).toBe('completed');
    expect(played.results[0]).toEqual({ read: 'hello from the project\n' });
    expect(String(played.results[1]!.error)).toContain('outside the session');
    expect(String(played.results[2]!.error)).toContain('outside the session');
    expect(String(played.results[3]!.error)).toContain('outside the session');
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    // The write inside was asked (Write is not read-only) and approved.
    expect(played.results[4]).toEqual({ write: 'ok' });
    expect(readFileSync(join(project, 'made.txt'), 'utf8')).toBe('made by the agent');
    expect(played.asked.map((a) => a.toolName)).toEqual(['Write']);
    expect(JSON.stringify(played.finalText)).not.toContain('outside secret');
  });

  test('a terminal command is judged by Sage\'s Bash rules: a deny rule refuses it; an approved permission is not asked again', async () => {
    writeFileSync(join(project, 'victim.txt'), 'keep me');
    const played = await play(
      'terminal',
      [
        { terminal: { command: 'rm', args: ['-f', 'victim.txt'] } },
        { permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch from-terminal.txt' } } },
        { terminal: { command: 'touch', args: ['from-terminal.txt'] } },
      ],
      () => ({ kind: 'confirm', confirmed: true }),
    );
    expect(played.status).toBe('completed');
    expect(String(played.results[0]!.error)).toContain('Sage denied');
    expect(existsSync(join(project, 'victim.txt'))).toBe(true);
    expect(played.results[1]).toEqual({ permission: 'yes' });
    expect(played.results[2]).toMatchObject({ exitCode: 0 });
    expect(existsSync(join(project, 'from-terminal.txt'))).toBe(true);
    // Asked once (the permission request), not again for the terminal that carried it out.
    expect(played.asked).toHaveLength(1);
  });

  test('cancel while a permission request waits: the request is answered cancelled and the run is cancelled', async () => {
    const played = await play('cancel', [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch never.txt' } } }, { terminal: { command: 'touch', args: ['never.txt'] } }], () => undefined, (cancel, events) => {
      const timer = setInterval(() => {
        if (events.some((e) => e.type === 'interaction.requested')) {
          clearInterval(timer);
          cancel();
        }
      }, 20);
    });
    expect(played.status).toBe('cancelled');
    expect(existsSync(join(project, 'never.txt'))).toBe(false);
    expect(played.events.some((e) => e.type === 'interaction.cancelled')).toBe(true);
  });
});

/**
 * The environment and folder of a `terminal/create` are part of the call: the agent cannot swap the
 * program behind a command Sage allows (`PATH`), make git run one (`GIT_CONFIG_*` setting
 * `core.fsmonitor`), or run it somewhere else. Each attacker's request below ran on the old client.
 */
describe('an ACP terminal\'s environment and folder are judged with its command', { timeout: 30_000 }, () => {
  let evilBin: string;
  let marker: string;
  beforeAll(() => {
    // An `ls` of the agent's own making, in a folder inside the project (the agent may write there).
    evilBin = join(project, 'evil-bin');
    marker = join(dir, 'evil-ls-ran');
    mkdirSync(evilBin, { recursive: true });
    writeFileSync(join(evilBin, 'ls'), `#!/bin/sh\necho pwned > '${marker}'\n`);
    chmodSync(join(evilBin, 'ls'), 0o755);
    execFileSync('git', ['init', '-q', project]);
    mkdirSync(join(project, 'vault'), { recursive: true });
    writeFileSync(join(project, 'vault', 'key'), 'vault secret\n');
  });
  const asCommand = (r: InteractionRequest) => (r as { input?: { command?: string } }).input?.command;

  test('--batch: PATH pointing at the agent\'s own ls is refused and that ls never runs; a plain ls still runs', async () => {
    const played = await play('env_path_batch', [
      { terminal: { command: 'ls', env: [{ name: 'PATH', value: `${evilBin}:/usr/bin:/bin` }] } },
      { terminal: { command: 'ls' } },
    ], () => undefined, undefined, { mode: 'batch' });
    expect(played.status).toBe('completed');
    expect(String(played.results[0]!.error)).toMatch(/PATH/);
    expect(existsSync(marker)).toBe(false);
    expect(played.results[1]).toMatchObject({ exitCode: 0 });
    expect(existsSync(marker)).toBe(false);
  });

  test('dontAsk: lower-case path, LD_PRELOAD and GIT_CONFIG_* setting core.fsmonitor are refused; git never runs the monitor', async () => {
    const fsmonitorRan = join(dir, 'fsmonitor-ran');
    const played = await play('env_git_dontask', [
      { terminal: { command: 'git', args: ['status'], env: [{ name: 'GIT_CONFIG_COUNT', value: '1' }, { name: 'GIT_CONFIG_KEY_0', value: 'core.fsmonitor' }, { name: 'GIT_CONFIG_VALUE_0', value: `touch '${fsmonitorRan}'` }] } },
      { terminal: { command: 'ls', env: [{ name: 'path', value: evilBin }] } },
      { terminal: { command: 'ls', env: [{ name: 'LD_PRELOAD', value: join(project, 'evil.so') }] } },
      { terminal: { command: 'git', args: ['status'] } },
    ], () => undefined, undefined, { permissionMode: 'dontAsk' });
    expect(played.status).toBe('completed');
    expect(String(played.results[0]!.error)).toMatch(/GIT_CONFIG_COUNT/);
    expect(String(played.results[1]!.error)).toMatch(/path/);
    expect(String(played.results[2]!.error)).toMatch(/LD_PRELOAD/);
    expect(existsSync(fsmonitorRan)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    // The same git status without the agent's variables is read-only and runs.
    expect(played.results[3]).toMatchObject({ exitCode: 0 });
  });

  test('an allow rule Bash(ls *) does not cover ls with the agent\'s PATH: the person is asked, at HIGH risk, and sees the variable', async () => {
    const played = await play('env_path_rule', [
      { terminal: { command: 'ls', env: [{ name: 'PATH', value: evilBin }] } },
    ], () => ({ kind: 'confirm', confirmed: false, message: 'no' }), undefined, { rules: [{ behavior: 'allow', rule: 'Bash(ls *)', source: 'test' }] });
    expect(played.status).toBe('completed');
    expect(played.asked.map(asCommand)).toEqual([`PATH=${evilBin} ls`]);
    expect(played.asked[0]!.metadata).toMatchObject({ risk: 'HIGH' });
    expect(String(played.results[0]!.error)).toBeTruthy();
    expect(existsSync(marker)).toBe(false);
  });

  test('a variable that changes nothing about what runs is decided as before and shown in the request; it reaches the command', async () => {
    const played = await play('env_safe', [
      { terminal: { command: 'ls', env: [{ name: 'CI', value: 'true' }] } },
      { terminal: { command: 'sh', args: ['-c', 'printf %s "$GREETING" > greeting.txt'], env: [{ name: 'GREETING', value: 'hello there' }] } },
    ], () => ({ kind: 'confirm', confirmed: true }));
    expect(played.status).toBe('completed');
    // CI=true ls is read-only, as ls is: not asked.
    expect(played.results[0]).toMatchObject({ exitCode: 0 });
    expect(played.asked.map(asCommand)).toEqual([`GREETING='hello there' sh -c 'printf %s "$GREETING" > greeting.txt'`]);
    expect(readFileSync(join(project, 'greeting.txt'), 'utf8')).toBe('hello there');
  });

  test('a command the person edited before approving is not run in the agent\'s form: nothing runs', async () => {
    const played = await play('env_edited', [
      { terminal: { command: 'ls', env: [{ name: 'PATH', value: evilBin }] } },
    ], () => ({ kind: 'confirm', confirmed: true, updatedInput: { command: 'ls' } }));
    expect(played.status).toBe('completed');
    expect(played.asked.map(asCommand)).toEqual([`PATH=${evilBin} ls`]);
    expect(String(played.results[0]!.error)).toContain('changed the command');
    expect(existsSync(marker)).toBe(false);
  });

  test('a folder outside the session is refused; a folder inside is judged as the folder it is (a Read deny on it holds)', async () => {
    const played = await play('cwd', [
      { terminal: { command: 'touch', args: ['planted.txt'], cwd: outside } },
      { terminal: { command: 'touch', args: ['planted.txt'], cwd: join(project, 'link-out') } },
      { terminal: { command: 'cat', args: ['key'], cwd: join(project, 'vault') } },
    ], () => ({ kind: 'confirm', confirmed: true }), undefined, { rules: [{ behavior: 'deny', rule: 'Read(./vault/**)', source: 'test' }] });
    expect(played.status).toBe('completed');
    expect(String(played.results[0]!.error)).toContain('outside the session');
    expect(String(played.results[1]!.error)).toContain('outside the session');
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    expect(String(played.results[2]!.error)).toContain('Sage denied');
    expect(JSON.stringify(played.results)).not.toContain('vault secret');
    expect(played.asked).toEqual([]);
  });

  test('an environment variable whose name the shell cannot spell is refused, never run', async () => {
    const played = await play('env_name', [
      { terminal: { command: 'ls', env: [{ name: 'BASH_FUNC_ls%%', value: '() { touch pwned; }' }] } },
    ], () => ({ kind: 'confirm', confirmed: true }));
    expect(String(played.results[0]!.error)).toContain('BASH_FUNC_ls%%');
    expect(played.asked).toEqual([]);
  });
});

/**
 * Every call of the agent ends in the run's history: the ones it reports (`tool_call` →
 * `tool_call_update`), the ones it only asks about (Gemini CLI sends no `tool_call` before a
 * permission request), and the ones Sage refused, which end with the refusal as Sage's own loop
 * records a denied call.
 */
describe('an ACP agent\'s tool calls are recorded', { timeout: 30_000 }, () => {
  const completedOf = (events: RunEvent[]) => events.filter((e) => e.type === 'tool.completed').map((e) => e.data as Record<string, unknown>);

  test('a call asked about without a tool_call first ends with tool.completed holding the agent\'s result, and counts', async () => {
    const played = await play('record_asked', [
      { permission: { kind: 'execute', title: 'Run echo', rawInput: { command: 'echo hi' }, announce: false, result: 'hi\n' } },
      { permission: { kind: 'execute', title: 'Run false', rawInput: { command: 'false' }, announce: false, result: 'exit code 1', fails: true } },
      { permission: { kind: 'edit', title: 'Write new.txt', path: join(project, 'new.txt'), announce: false, result: 'twelve chars' } },
    ], () => ({ kind: 'confirm', confirmed: true }));
    expect(played.status).toBe('completed');
    const completed = completedOf(played.events);
    expect(completed).toEqual([
      expect.objectContaining({ toolCallId: 'call_1', toolName: 'Bash', content: 'hi\n', isError: false }),
      expect.objectContaining({ toolCallId: 'call_2', toolName: 'Bash', content: 'exit code 1', isError: true }),
      expect.objectContaining({ toolCallId: 'call_3', toolName: 'Write', content: `Wrote ${join(project, 'new.txt')} (12 characters).`, isError: false }),
    ]);
    expect(completed.some((c) => c.ungated)).toBe(false);
    expect(played.toolCalls).toBe(3);
  });

  test('a call the person refused ends once, with the refusal, not as the agent\'s own ungated call', async () => {
    const played = await play('record_denied', [
      { permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch z.txt' }, announce: false } },
    ], () => ({ kind: 'confirm', confirmed: false, message: 'not now' }));
    expect(played.results).toEqual([{ permission: 'no' }]);
    const completed = completedOf(played.events);
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ toolCallId: 'call_1', toolName: 'Bash', isError: true });
    expect(String(completed[0]!.content)).toContain('not now');
    expect(completed[0]!.ungated).toBeUndefined();
    expect(played.toolCalls).toBe(1);
  });

  test('a call the agent reports and runs on its own ends with its error, still ungated', async () => {
    const played = await play('record_own_failed', [{ ownRead: join(project, 'no-such-file.txt') }], () => undefined);
    const completed = completedOf(played.events);
    expect(completed).toEqual([expect.objectContaining({ toolName: 'Read', isError: true, content: 'ENOENT', ungated: true })]);
    expect(played.toolCalls).toBe(1);
  });

  test('a client read and a terminal the gate allowed end with what Sage served: the text, the output and exit code', async () => {
    const played = await play('record_served', [{ read: join(project, 'notes.txt') }, { terminal: { command: 'sh', args: ['-c', 'echo out; exit 3'] } }], () => ({ kind: 'confirm', confirmed: true }));
    expect(played.status).toBe('completed');
    const completed = completedOf(played.events);
    expect(completed).toEqual([
      expect.objectContaining({ toolName: 'Read', content: 'hello from the project\n', isError: false }),
      expect.objectContaining({ toolName: 'Bash', content: 'out\n[exit code 3]', isError: true }),
    ]);
    expect(completed.some((c) => c.ungated)).toBe(false);
    expect(played.toolCalls).toBe(2);
  });

  test('a client request the gate refused (a deny rule on a terminal command) ends with the refusal', async () => {
    const played = await play('record_terminal_denied', [{ terminal: { command: 'rm', args: ['-f', 'nothing.txt'] } }], () => undefined);
    const completed = completedOf(played.events);
    expect(completed).toEqual([expect.objectContaining({ toolName: 'Bash', isError: true })]);
    expect(String(completed[0]!.content)).toContain('Sage denied');
    expect(played.toolCalls).toBe(1);
  });
});

/**
 * What a read of a file that does not exist answers, per agent: Gemini CLI 0.61.0 turns any
 * JSON-RPC error into "[object Object]" before it looks for "not found", so its write_file of a new
 * file failed on the pre-read; Qwen Code 0.15.10 reads the resource-not-found code (-32002) as
 * ENOENT. Overwriting an existing file is unchanged.
 */
describe('an ACP read of a missing file', { timeout: 30_000 }, () => {
  test('Gemini CLI gets an empty read, so its write_file of a new file goes on to fs/write_text_file', async () => {
    const path = join(project, 'new-from-gemini.txt');
    const played = await play('missing_gemini', [{ read: path }, { write: { path, content: 'new file' } }], () => ({ kind: 'confirm', confirmed: true }), undefined, { preset: 'gemini' });
    expect(played.status).toBe('completed');
    expect(played.results).toEqual([{ read: '' }, { write: 'ok' }]);
    expect(readFileSync(path, 'utf8')).toBe('new file');
  });

  test('any other ACP agent (Qwen Code too) gets resource-not-found, -32002, naming the file', async () => {
    for (const preset of ['qwen', 'acp']) {
      const played = await play(`missing_${preset}`, [{ read: join(project, 'absent.txt') }], () => undefined, undefined, { preset });
      expect(played.results).toEqual([expect.objectContaining({ code: -32002 })]);
      expect(String(played.results[0]!.error)).toContain('absent.txt');
    }
  });

  test('a folder is not a missing file: Gemini CLI still gets an error', async () => {
    mkdirSync(join(project, 'a-folder'), { recursive: true });
    const played = await play('missing_folder_gemini', [{ read: join(project, 'a-folder') }], () => undefined, undefined, { preset: 'gemini' });
    expect(played.results[0]!.error).toBeTruthy();
  });
});

/**
 * Qwen Code 0.15.10 shows its model any JSON-RPC error object as "[object Object]": a refused read
 * is answered with a text that says it is Sage's refusal and why, in place of the file.
 */
describe('a read Sage refuses to Qwen Code', { timeout: 30_000 }, () => {
  test('a deny rule, a person\'s no and a file outside the folders each reach the model as text with the reason', async () => {
    writeFileSync(join(project, 'private.txt'), 'PRIVATE CONTENT\n');
    const played = await play('qwen_refused', [
      { read: join(project, 'private.txt') },
      { read: join(project, 'notes.txt') },
      { read: join(outside, 'secret.txt') },
    ], () => ({ kind: 'confirm', confirmed: false, message: 'not that one' }), undefined, {
      preset: 'qwen',
      permissionMode: 'default',
      rules: [{ behavior: 'deny', rule: 'Read(./private.txt)', source: 'test' }, { behavior: 'ask', rule: 'Read(./notes.txt)', source: 'test' }],
    });
    expect(played.status).toBe('completed');
    const [denied, declined, outsideRead] = played.results.map((r) => String(r.read));
    expect(denied).toMatch(/Sage refused/);
    expect(denied).toContain('Read(./private.txt)');
    expect(declined).toMatch(/Sage refused/);
    expect(declined).toContain('not that one');
    expect(outsideRead).toMatch(/outside the session's folders/);
    expect(JSON.stringify(played.results)).not.toContain('PRIVATE CONTENT');
    expect(JSON.stringify(played.results)).not.toContain('outside secret');
  });

  test('any other agent still gets a refusal as an error', async () => {
    const played = await play('acp_refused', [{ read: join(outside, 'secret.txt') }], () => undefined);
    expect(String(played.results[0]!.error)).toContain('outside the session');
  });
});
