import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InteractionRequest } from '../interaction/index.js';
import { openSqliteStore } from '../store/open-store.js';
import { parseAge, registerRunsCommands, responseFromFlags } from './runs-command.js';
import { cliRuntime } from '../runtime/cli-runtime.js';
import { DurableRunner } from '../durable/durable-runner.js';
import { storeUserPermissions } from '../runtime/user-permission-adapter.js';

const confirm = { id: 'r:c:permission', runId: 'r', kind: 'confirm', title: 'Allow Bash?', createdAt: '2026-01-01T00:00:00Z' } as InteractionRequest;
const questions = {
  id: 'r:q',
  runId: 'r',
  kind: 'questions',
  title: 'Questions',
  createdAt: '2026-01-01T00:00:00Z',
  questions: [{ question: 'Which color?', header: 'Color', multiSelect: false, options: [{ label: 'Red', description: '' }, { label: 'Blue', description: '' }] }],
} as InteractionRequest;

describe('sage runs / respond flags', () => {
  it('reads 30d, 12h and 90m, and refuses anything else', () => {
    expect(parseAge('30d')).toBe(30 * 86_400_000);
    expect(parseAge('12h')).toBe(12 * 3_600_000);
    expect(parseAge('90m')).toBe(90 * 60_000);
    for (const bad of ['30', '1w', '-1d', '1.5h', 'd', '']) expect(() => parseAge(bad)).toThrow(/30d, 12h, 90m/);
  });

  it('builds the response the flags describe, and refuses flags that do not fit the request', () => {
    expect(responseFromFlags(confirm, { allow: true })).toEqual({ kind: 'confirm', confirmed: true });
    expect(responseFromFlags(confirm, { deny: true, message: 'no' })).toEqual({ kind: 'confirm', confirmed: false, message: 'no' });
    expect(() => responseFromFlags(confirm, { allow: true, deny: true })).toThrow(/exactly one/);
    expect(() => responseFromFlags(confirm, {})).toThrow(/exactly one/);
    expect(() => responseFromFlags(confirm, { text: 'x' })).toThrow(/--allow \| --deny/);
    expect(() => responseFromFlags(confirm, { text: 'x', message: 'm' })).toThrow(/--message goes with --deny/);
    // An approval carries no note to the agent: a message with --allow would be dropped, so it is refused.
    expect(() => responseFromFlags(confirm, { allow: true, message: 'go ahead' })).toThrow(/--message goes with --deny .*an approval carries no message/);
    // By question text or header, labels case-insensitively.
    expect(responseFromFlags(questions, { answer: ['Which color?=Blue'] })).toEqual({ kind: 'questions', answers: { 'Which color?': 'Blue' } });
    expect(responseFromFlags(questions, { answer: ['color=red'] })).toEqual({ kind: 'questions', answers: { 'Which color?': 'Red' } });
    expect(() => responseFromFlags(questions, { answer: ['Which shape?=round'] })).toThrow(/not one of the questions/);
    expect(() => responseFromFlags(questions, { answer: ['no equals sign'] })).toThrow(/Question=Label/);
  });
});

describe('sage runs recover, in process', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sage-durable-cli-unit-'));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drives a queued run (sage run --detach whose child never ran) to its end', async () => {
    const db = join(dir, 'sage.db');
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ text: 'all done' }] }));
    const store = await openSqliteStore(db);
    const runner = new DurableRunner({ store, runtime: cliRuntime(store) });
    const queued = await runner.enqueue('nothing', { model: `scripted:${script}`, cwd: dir, metadata: { cli: { oneShot: true } } });
    await runner.close();
    await store.close();

    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const program = new Command('sage').exitOverride();
    registerRunsCommands(program);
    await program.parseAsync(['node', 'sage', 'runs', 'recover', '--db', db, '--json']);
    vi.restoreAllMocks();
    const printed = JSON.parse(lines.join('')) as { runs: { runId: string; status: string }[] };
    expect(printed.runs).toEqual([{ runId: queued.id, status: 'completed', pendingInteractionId: null }]);
  });

  it('leaves a queued run whose settings files do not load as it is, and reports it with the file, line and field', async () => {
    const db = join(dir, 'sage.db');
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ text: 'all done' }] }));
    const project = join(dir, 'project');
    mkdirSync(join(project, '.sage'), { recursive: true });
    writeFileSync(join(project, '.sage', 'settings.json'), '{\n  "permissions": {\n    "deny": ["Bash(rm *)"],\n  }\n}\n');
    const store = await openSqliteStore(db);
    const runner = new DurableRunner({ store, runtime: cliRuntime(store) });
    const queued = await runner.enqueue('nothing', { model: `scripted:${script}`, cwd: project, origin: { surface: 'detached' }, oneTask: true });
    await runner.close();
    await store.close();

    const lines: string[] = [];
    const errors: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      errors.push(String(chunk));
      return true;
    });
    const program = new Command('sage').exitOverride();
    registerRunsCommands(program);
    const exitCode = process.exitCode;
    try {
      await program.parseAsync(['node', 'sage', 'runs', 'recover', '--db', db, '--json']);
      expect(process.exitCode).toBe(1);
    } finally {
      process.exitCode = exitCode;
      vi.restoreAllMocks();
    }
    const printed = JSON.parse(lines.join('')) as { runs: unknown[]; left: { runId: string; reason: string }[] };
    expect(printed.runs).toEqual([]);
    expect(printed.left).toEqual([{ runId: queued.id, reason: expect.stringContaining(join(project, '.sage', 'settings.json')) }]);
    expect(printed.left[0]!.reason).toMatch(/line \d+/);
    expect(errors.join('')).toContain(`Run ${queued.id} was left as it is`);
    const after = await openSqliteStore(db);
    expect(await after.getRun(queued.id)).toMatchObject({ status: 'running', owner: null, error: null });
    await after.close();
  });

  it('keeps per-user rules in the store: one list at a time, removable', async () => {
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const users = storeUserPermissions(store);
    await users.add('bob', 'deny', 'Bash(rm:*)');
    expect(await users.list('bob')).toEqual({ allow: [], deny: ['Bash(rm:*)'] });
    await users.add('bob', 'allow', 'Bash(rm:*)');
    expect(await users.list('bob')).toEqual({ allow: ['Bash(rm:*)'], deny: [] });
    expect(await users.remove('bob', 'Bash(rm:*)')).toBe(true);
    expect(await users.remove('bob', 'Bash(rm:*)')).toBe(false);
    expect(await users.list('alice')).toEqual({ allow: [], deny: [] });
    await store.close();
  });
});

describe('sage respond, in process', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sage-respond-unit-'));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it("audits the answer with the channel it came through ('cli'), not the run's", async () => {
    const db = join(dir, 'sage.db');
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ toolCalls: [{ name: 'Write', input: { file_path: join(dir, 'a.txt'), content: 'a' } }] }, { text: 'done' }] }));
    const store = await openSqliteStore(db);
    const runner = new DurableRunner({ store, runtime: cliRuntime(store), idleSuspendMs: 0 });
    await runner.open();
    // A run started by another surface, waiting for an approval.
    const started = await runner.start('write a', { model: `scripted:${script}`, cwd: dir, origin: { surface: 'web' }, oneTask: true });
    await started.outcome;
    const ask = (await store.listInteractions({ runId: started.runId, status: ['pending'] }))[0];
    expect(ask?.kind).toBe('confirm');
    // The run's own channel is not 'cli', so the audit can only say 'cli' if the answer carries it.
    expect((await store.getRun(started.runId))?.channel).not.toBe('cli');
    await runner.close();
    await store.close();

    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const program = new Command('sage').exitOverride();
    registerRunsCommands(program);
    await program.parseAsync(['node', 'sage', 'respond', ask!.id, '--allow', '--user', 'alice', '--db', db, '--json']);
    vi.restoreAllMocks();

    const after = await openSqliteStore(db);
    try {
      const answer = (await after.listAudit({ runId: started.runId })).find((e) => e.data?.['kind'] === 'answer');
      expect(answer?.data).toMatchObject({ answer: 'approved', answeredBy: 'alice', channel: 'cli' });
    } finally {
      await after.close();
    }
  });
});
