import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cliRuntime } from './cli-runtime.js';
import { builtinToolInfo, trustFolder, type GateCall, type GateContext, type PermissionEngine } from '../permission/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { RunRecord, Store } from '../store/index.js';
import { ServerPolicy } from './server-policy.js';
import { createWebGate, serverGatedRequest } from './web-gate.js';

let dir: string;
let home: string;
let store: Store;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-web-gate-')));
  home = join(dir, 'home');
  mkdirSync(home);
  store = await openSqliteStore(join(dir, 'sage.db'));
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

type Shape = 'typed' | 'metadata';

/**
 * A stored web run of bob's, started under `startedUnder` with the given request: `typed` as runs
 * are stored now (the grant and the client's rules in its RunSpec), `metadata` as a run stored
 * before that kept them (version 1 and early version 2 runs still in a store).
 */
function webRun(startedUnder: ServerPolicy, request: { permissionMode: 'default' | 'bypassPermissions'; allow?: string[] }, role: 'user' | 'admin' = 'user', shape: Shape = 'typed'): RunRecord {
  const now = new Date().toISOString();
  const admitted = serverGatedRequest({ ...request, role }, startedUnder);
  const options =
    shape === 'typed'
      ? { version: 2, cwd: dir, model: 'scripted:x', origin: { surface: 'web', startedBy: 'bob' }, permissions: { mode: admitted.permissionMode, rules: admitted.rules, ignoreBrokenSettings: false, server: admitted.server } }
      : {
          cwd: dir,
          model: 'scripted:x',
          metadata: { permissionMode: request.permissionMode, allow: request.allow ?? [], ask: [], deny: [], role, serverDeny: [...startedUnder.deny], serverAsk: [...startedUnder.ask] },
        };
  return {
    // Each shape its own owner: the per-user rules an "always" answer adds are the owner's.
    id: `run_${Math.random().toString(36).slice(2)}`, status: 'suspended', userId: shape === 'typed' ? 'bob' : 'bob-before', sessionId: 'session-web', channel: 'web', task: 't',
    options,
    owner: null, epoch: 1, leaseExpiresAt: null, pendingInteractionId: null, finalText: null, error: null, createdAt: now, updatedAt: now, finishedAt: null,
  };
}
const bash = (command: string): GateCall => ({ toolCallId: 'call-1', toolName: 'Bash', input: { command }, tool: builtinToolInfo('Bash') });
const ctx = (run: RunRecord): GateContext => ({ runId: run.id, sessionId: run.sessionId, userId: run.userId, channel: 'web', cwd: dir });

describe.each<Shape>(['typed', 'metadata'])('the gate of a resumed web run (stored %s)', (shape) => {
  const startedUnder = new ServerPolicy({ permissionModes: ['default', 'bypassPermissions'], clientAllowRules: true, deny: ['Bash(rm *)'] });

  test('the server-wide deny in force when it started still applies under a policy without it; mode and allow follow the current policy', async () => {
    const run = webRun(startedUnder, { permissionMode: 'bypassPermissions', allow: ['Bash(touch *)'] }, 'user', shape);
    const gate = await createWebGate(store, run, { serverPolicy: new ServerPolicy(), home });
    await gate.ready();
    expect(await gate.decide(bash('rm -rf build'), ctx(run))).toMatchObject({ behavior: 'deny', rule: 'Bash(rm *)', ruleSource: 'server policy' });
    expect(gate.mode).toBe('default');
    expect((await gate.decide(bash('touch x.txt'), ctx(run))).behavior).toBe('ask');
  });

  test('resumed by the CLI (sage respond), it gets the same gate, and an "always" answer goes to the per-user rules, not a file', async () => {
    const run = webRun(startedUnder, { permissionMode: 'bypassPermissions' }, 'user', shape);
    const gate = (await cliRuntime(store, { home }).createGate!(run)) as PermissionEngine;
    expect(await gate.decide(bash('rm -rf build'), ctx(run))).toMatchObject({ behavior: 'deny', rule: 'Bash(rm *)' });
    const decision = await gate.decide(bash('touch y.txt'), ctx(run));
    expect(decision.behavior).toBe('ask');
    await gate.recordAnswer({ call: bash('touch y.txt'), decision, approved: true, remember: 'user', userId: run.userId }, ctx(run));
    expect((await store.listUserPermissions(run.userId)).map((r) => [r.rule, r.behavior, r.createdBy])).toEqual([['Bash(touch y.txt)', 'allow', run.userId]]);
    for (const base of [home, dir]) expect(existsSync(join(base, '.sage', 'settings.json'))).toBe(false);
  });
});

describe('what a client cannot lift, even as an admin with allow rules in bypassPermissions', () => {
  const permissive = { permissionModes: ['default', 'bypassPermissions'] as const, clientAllowRules: true };

  test('a server-wide ask rule still asks', async () => {
    const policy = new ServerPolicy({ ...permissive, permissionModes: [...permissive.permissionModes], ask: ['Bash(git push *)'] });
    const run = webRun(policy, { permissionMode: 'bypassPermissions', allow: ['Bash'] }, 'admin');
    const gate = await createWebGate(store, run, { serverPolicy: policy, home });
    await gate.ready();
    expect(await gate.decide(bash('git push origin main'), ctx(run))).toMatchObject({ behavior: 'ask', rule: 'Bash(git push *)' });
    expect((await gate.decide(bash('git status'), ctx(run))).behavior).toBe('allow');
  });

  test('the host\'s managed settings deny; a project file\'s defaultMode does not apply, nor its allow rules until the host trusts the folder', async () => {
    const managedFile = join(dir, 'managed.json');
    writeFileSync(managedFile, JSON.stringify({ permissions: { deny: ['Bash(curl *)'] } }));
    mkdirSync(join(dir, 'proj', '.sage'), { recursive: true });
    writeFileSync(join(dir, 'proj', '.sage', 'settings.local.json'), JSON.stringify({ permissions: { allow: ['Bash(touch *)'], defaultMode: 'bypassPermissions' } }));
    // The committed project file never adds allow rules to a web run, trusted or not.
    writeFileSync(join(dir, 'proj', '.sage', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(mkdir *)'] } }));
    const policy = new ServerPolicy({ ...permissive, permissionModes: [...permissive.permissionModes], settings: { home, managedFile } });
    const admin = webRun(policy, { permissionMode: 'bypassPermissions', allow: ['Bash'] }, 'admin');
    const gate = await createWebGate(store, admin, { serverPolicy: policy, home });
    await gate.ready();
    expect(await gate.decide(bash('curl https://example.com'), ctx(admin))).toMatchObject({ behavior: 'deny', rule: 'Bash(curl *)' });

    const plain = webRun(policy, { permissionMode: 'default' });
    plain.options['cwd'] = join(dir, 'proj');
    const projectGate = await createWebGate(store, plain, { serverPolicy: policy, home });
    expect(projectGate.mode).toBe('default');
    // Not trusted: a cloned repository's own settings.local.json allows nothing.
    expect((await projectGate.decide(bash('touch z.txt'), { ...ctx(plain), cwd: join(dir, 'proj') })).behavior).toBe('ask');

    // Trusted: the local file is where "always, this project" answers are saved, so its allow rules apply.
    trustFolder(home, join(dir, 'proj'));
    const trustedGate = await createWebGate(store, plain, { serverPolicy: policy, home });
    expect(trustedGate.mode).toBe('default');
    expect(await trustedGate.decide(bash('touch z.txt'), { ...ctx(plain), cwd: join(dir, 'proj') })).toMatchObject({ behavior: 'allow', rule: 'Bash(touch *)' });
    expect((await trustedGate.decide(bash('mkdir made'), { ...ctx(plain), cwd: join(dir, 'proj') })).behavior).toBe('ask');
  });
});

describe('a web run stored before its grant was typed (fixture: version 2, lists in metadata)', () => {
  test('resumes with the gate it started with: the server deny and ask of then, the client deny', async () => {
    const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '../../test/fixtures/run-spec/v2-web-metadata.json'), 'utf8')) as { channel: string; userId: string; options: Record<string, unknown> };
    const now = new Date().toISOString();
    const run: RunRecord = {
      id: 'run_v2_web_metadata', status: 'suspended', userId: fixture.userId, sessionId: 's', channel: fixture.channel, task: 't',
      options: { ...fixture.options, cwd: dir, projectRoot: dir },
      owner: null, epoch: 1, leaseExpiresAt: null, pendingInteractionId: null, finalText: null, error: null, createdAt: now, updatedAt: now, finishedAt: null,
    };
    const gate = (await cliRuntime(store, { home }).createGate!(run)) as PermissionEngine;
    expect(await gate.decide(bash('rm -rf build'), ctx(run))).toMatchObject({ behavior: 'deny', rule: 'Bash(rm *)' });
    expect(await gate.decide(bash('curl https://example.com'), ctx(run))).toMatchObject({ behavior: 'deny', rule: 'Bash(curl *)' });
    expect(await gate.decide(bash('docker run x'), ctx(run))).toMatchObject({ behavior: 'ask', rule: 'Bash(docker *)' });
  });
});
