import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../durable/durable-runner.js';
import { builtinToolInfo, type GateCall, type GateContext, type PermissionGate } from '../permission/index.js';
import { ServerPolicy } from './server-policy.js';
import { serverGatedRequest } from './web-gate.js';
import { openSqliteStore } from '../store/open-store.js';
import type { RunRecord, Store } from '../store/index.js';
import { createRunFactory, type RunRequest } from './create-run.js';

/**
 * One factory builds every run's gate, so the same settings and the same calls get
 * the same decisions whether the run was started in a terminal, detached, or from the web page —
 * except where the server policy deliberately differs (said in the table) — and a run rebuilt from
 * its stored RunSpec in another process decides exactly as it did when it started.
 */
let dir: string;
let home: string;
let project: string;
let store: Store;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-same-gate-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(project);
  // The host user's settings: a deny, an ask and an allow.
  writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)', 'Read(./secrets/**)'], ask: ['Bash(git push *)'], allow: ['Bash(npm test)'] } }));
  store = await openSqliteStore(join(dir, 'sage.db'));
  policy = new ServerPolicy({ settings: { home } });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const bash = (command: string): GateCall => ({ toolCallId: `call-${command}`, toolName: 'Bash', input: { command }, tool: builtinToolInfo('Bash') });
const read = (file: string): GateCall => ({ toolCallId: `call-read-${file}`, toolName: 'Read', input: { file_path: join(project, file) }, tool: builtinToolInfo('Read') });
const ctx = (run: RunRecord): GateContext => ({ runId: run.id, sessionId: run.sessionId, userId: run.userId, channel: run.channel, cwd: project });

/** The server's policy as `sage serve` resolves it: the host's settings are read (home). */
let policy: ServerPolicy;

/** Stores a run the way its surface does (the factory's RunSpec) and returns its record. */
async function storedRun(surface: RunRequest['surface'], extra: Partial<RunRequest> = {}): Promise<RunRecord> {
  const factory = createRunFactory({ store, home, server: { policy } });
  const spec = await factory.admitRun({ task: 't',
    surface,
    model: 'scripted:/x.json',
    cwd: project,
    ...extra,
    ...(surface === 'web' ? serverGatedRequest({ permissionMode: 'default', role: 'user' }, policy) : {}),
  });
  const { channel, ...options } = spec;
  const id = `run_${surface}_${Math.random().toString(36).slice(2)}`;
  return store.createRun({ id, userId: 'alice', sessionId: id, channel: channel ?? 'sdk', task: 't', options }, null);
}

/** A gate built for `run` by a fresh factory: what any process resuming it would build. */
async function gateOf(run: RunRecord): Promise<PermissionGate> {
  return createRunFactory({ store, home, server: { policy } }).createGate!(run);
}

const table = (): Array<{ call: GateCall; terminal: string; detached: string; web: string; why?: string }> => [
  { call: bash('rm -rf build'), terminal: 'deny', detached: 'deny', web: 'deny' },
  { call: bash('git push origin main'), terminal: 'ask', detached: 'ask', web: 'ask' },
  { call: read('secrets/key.pem'), terminal: 'deny', detached: 'deny', web: 'deny' },
  { call: read('README.md'), terminal: 'allow', detached: 'allow', web: 'allow' },
  { call: bash('touch made.txt'), terminal: 'ask', detached: 'ask', web: 'ask' },
  // The server policy on purpose: the host's allow rules are not a web client's (only the managed file's are).
  { call: bash('npm test'), terminal: 'allow', detached: 'allow', web: 'ask', why: 'host allow rules are not applied to web runs' },
];

describe('the same gate on every surface', () => {
  test('a terminal run, a detached run and a web run decide the same calls the same way (the table says where the server policy differs)', async () => {
    const runs = { terminal: await storedRun('terminal'), detached: await storedRun('detached'), web: await storedRun('web') };
    const gates = { terminal: await gateOf(runs.terminal), detached: await gateOf(runs.detached), web: await gateOf(runs.web) };
    const seen = [];
    const CALLS = table();
    for (const row of CALLS) {
      const decide = async (surface: keyof typeof runs) => (await gates[surface].decide(row.call, ctx(runs[surface]))).behavior;
      seen.push({ call: row.call.input, terminal: await decide('terminal'), detached: await decide('detached'), web: await decide('web') });
    }
    expect(seen).toEqual(CALLS.map((r) => ({ call: r.call.input, terminal: r.terminal, detached: r.detached, web: r.web })));
  });

  test('a resumed run is rebuilt from its stored RunSpec with exactly the same gate, its session answers included', async () => {
    const run = await storedRun('terminal', { permissionMode: 'acceptEdits', rules: [{ behavior: 'allow', rule: 'Bash(make *)', source: 'cli' }, { behavior: 'deny', rule: 'Edit(./locked/**)', source: 'cli' }] });
    const calls = [bash('make all'), bash('rm -rf build'), bash('git push'), bash('npm test'), bash('curl example.com'), read('secrets/a'), { ...read('x'), toolName: 'Edit', input: { file_path: join(project, 'locked', 'a.ts'), old_string: 'a', new_string: 'b' }, tool: builtinToolInfo('Edit') }];
    const first = await gateOf(run);
    const before = await Promise.all(calls.map(async (c) => (await first.decide(c, ctx(run))).behavior));
    // An "always for this run" answer, stored as the loop stores it.
    const asked = await first.decide(bash('curl example.com'), ctx(run));
    expect(asked.behavior).toBe('ask');
    const suggestion = (asked as { suggestions?: Array<{ rule: string }> }).suggestions?.[0]?.rule;
    expect(suggestion).toBeDefined();
    const id = `${run.id}:call-curl:permission`;
    const full = (asked as { suggestions?: unknown[] }).suggestions!.slice(0, 1);
    await store.saveInteraction({ id, runId: run.id, kind: 'confirm', title: 'Bash', toolCallId: 'call-curl', toolName: 'Bash', input: bash('curl example.com').input, suggestions: full, createdAt: new Date().toISOString() } as never);
    await store.claimAnswer(id, { requestId: id, kind: 'confirm', confirmed: true, remember: 'session', rule: suggestion!, respondedAt: new Date().toISOString() } as never);

    const resumed = await gateOf((await store.getRun(run.id))!);
    const after = await Promise.all(calls.map(async (c) => (await resumed.decide(c, ctx(run))).behavior));
    expect(after.filter((_, i) => calls[i] !== calls[4])).toEqual(before.filter((_, i) => calls[i] !== calls[4]));
    expect(before).toEqual(['allow', 'deny', 'ask', 'allow', 'ask', 'deny', 'deny']);
    expect((await resumed.decide(bash('curl example.com'), ctx(run))).behavior).toBe('allow');
  });

  test("a terminal run's gate writes its decisions to the store's audit log", async () => {
    const run = await storedRun('terminal');
    const gate = await gateOf(run);
    await gate.decide(bash('rm -rf build'), ctx(run));
    const audit = await store.listAudit({ runId: run.id });
    expect(audit).toEqual([expect.objectContaining({ runId: run.id, toolName: 'Bash', behavior: 'deny', rule: 'Bash(rm *)' })]);
  });

  test('sage runs recover leaves a run whose settings files do not load as it is: not failed, not resumed, reported with the file, line and field', async () => {
    const broken = join(dir, 'broken');
    mkdirSync(join(broken, '.sage'), { recursive: true });
    writeFileSync(join(broken, '.sage', 'settings.json'), '{\n  "permissions": {\n    "deny": ["Bash(rm *)"],\n  }\n}\n');
    const run = await storedRun('detached', { cwd: broken });
    const runner = new DurableRunner({ store, runtime: createRunFactory({ store, home }), idleSuspendMs: 0 });
    await runner.open();
    try {
      const { resumed, left } = await runner.recover();
      expect(resumed).not.toContain(run.id);
      expect(left.map((l) => l.runId)).toContain(run.id);
      const reason = left.find((l) => l.runId === run.id)!.message;
      expect(reason).toContain(join(broken, '.sage', 'settings.json'));
      expect(reason).toMatch(/line \d+/);
      const after = await store.getRun(run.id);
      expect(after).toMatchObject({ status: 'running', owner: null, error: null });
      expect(await store.readEvents(run.id, { afterSeq: 0 })).toEqual([]);
    } finally {
      await runner.close();
    }
  });
});
