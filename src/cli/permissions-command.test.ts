import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { registerPermissionsCommand } from './permissions-command.js';
import { tempWorkspace } from '../permission/test-support/test-fixtures.js';
import { InMemoryUserPermissionStore } from '../permission/user-permission-store.js';

const ws = tempWorkspace();
mkdirSync(ws.project, { recursive: true });
afterAll(() => rmSync(ws.base, { recursive: true, force: true }));

async function sage(args: string[], store = new InMemoryUserPermissionStore()) {
  const lines: string[] = [];
  const errors: string[] = [];
  let code = 0;
  const program = new Command().exitOverride();
  registerPermissionsCommand(program, { home: ws.home, userStore: store, stdout: (l) => lines.push(l), stderr: (l) => errors.push(l), exit: (c) => { code = c; } });
  await program.parseAsync(['node', 'sage', ...args]);
  return { lines, errors, code };
}

describe('sage permissions', () => {
  it('check prints the decision as one JSON object', async () => {
    const r = await sage(['permissions', 'check', '--tool', 'Bash', '--input', '{"command":"ls -la"}', '--cwd', ws.project]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({ behavior: 'allow', source: 'risk' });
  });

  it('check reports a hook type Sage does not run on stderr and still applies the file\'s rules', async () => {
    const settings = path.join(ws.base, 'prompt-hook.json');
    writeFileSync(settings, JSON.stringify({ permissions: { allow: ['Bash(npm test *)'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'prompt', prompt: 'ok?' }] }] } }));
    const r = await sage(['permissions', 'check', '--tool', 'Bash', '--input', '{"command":"npm test"}', '--settings', settings, '--cwd', ws.project]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({ behavior: 'allow', rule: 'Bash(npm test *)' });
    expect(r.errors).toEqual([expect.stringMatching(/^warning: .*prompt-hook\.json hooks\.PreToolUse\[0\]\.hooks\[0\]: Sage does not run "prompt" hooks/)]);
  });

  it('check honours --permission-mode and a --settings file', async () => {
    const settings = path.join(ws.base, 's.json');
    await import('node:fs').then((fs) => fs.writeFileSync(settings, JSON.stringify({ permissions: { deny: ['Bash(npm publish *)'] } })));
    const r = await sage(['permissions', 'check', '--tool', 'Bash', '--input', '{"command":"npm publish"}', '--settings', settings, '--cwd', ws.project, '--permission-mode', 'bypassPermissions']);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({ behavior: 'deny', rule: 'Bash(npm publish *)' });
  });

  it('bad arguments exit 2 with one clear line', async () => {
    const r = await sage(['permissions', 'check', '--tool', 'Bash', '--input', '{nope', '--cwd', ws.project]);
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([expect.stringContaining('--input is not valid JSON')]);
    const m = await sage(['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--permission-mode', 'yolo']);
    expect(m.code).toBe(2);
    const bad = await sage(['permissions', 'allow', 'Bash(rm -rf', '--cwd', ws.project]);
    expect(bad.code).toBe(2);
  });

  it('allow, list and remove in a settings scope and in the per-user store', async () => {
    await sage(['permissions', 'allow', 'Bash(npm test)', '--scope', 'project', '--cwd', ws.project]);
    expect(JSON.parse(readFileSync(path.join(ws.project, '.sage/settings.json'), 'utf8')).permissions.allow).toEqual(['Bash(npm test)']);
    const store = new InMemoryUserPermissionStore();
    await sage(['permissions', 'deny', 'Bash(curl *)', '--user', 'bob'], store);
    expect(await store.list('bob')).toEqual({ allow: [], deny: ['Bash(curl *)'] });
    const removed = await sage(['permissions', 'remove', 'Bash(curl *)', '--user', 'bob'], store);
    expect(JSON.parse(removed.lines[0]!)).toEqual({ removed: true, rule: 'Bash(curl *)' });
    const session = await sage(['permissions', 'allow', 'Bash(ls)', '--scope', 'session']);
    expect(session.code).toBe(2);
  });
});

describe('sage permissions without an explicit home', () => {
  it('writes user-scope rules under SAGE_HOME, never the real home', async () => {
    const sageHome = path.join(ws.base, 'sage-home');
    const previous = process.env.SAGE_HOME;
    process.env.SAGE_HOME = sageHome;
    try {
      const program = new Command().exitOverride();
      let code = 0;
      registerPermissionsCommand(program, { stdout: () => {}, stderr: () => {}, exit: (c) => { code = c; } });
      await program.parseAsync(['node', 'sage', 'permissions', 'allow', 'Bash(npm run lint)', '--scope', 'user', '--cwd', ws.project]);
      expect(code).toBe(0);
      expect(JSON.parse(readFileSync(path.join(sageHome, '.sage/settings.json'), 'utf8')).permissions.allow).toEqual(['Bash(npm run lint)']);
    } finally {
      if (previous === undefined) delete process.env.SAGE_HOME;
      else process.env.SAGE_HOME = previous;
    }
  });
});

describe('sage permissions check --surface: the answer a run of that surface gets', () => {
  const surfaceWs = tempWorkspace();
  mkdirSync(surfaceWs.project, { recursive: true });
  mkdirSync(path.join(surfaceWs.home, '.sage'), { recursive: true });
  // The host user's settings: an allow (a web client's run does not get it), an ask and a deny.
  writeFileSync(path.join(surfaceWs.home, '.sage', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(npm test)'], ask: ['Bash(git push *)'], deny: ['Bash(rm *)'] } }));
  afterAll(() => rmSync(surfaceWs.base, { recursive: true, force: true }));

  const check = async (surface: string, command: string) => {
    const lines: string[] = [];
    const program = new Command().exitOverride();
    registerPermissionsCommand(program, { home: surfaceWs.home, userStore: new InMemoryUserPermissionStore(), stdout: (l) => lines.push(l), stderr: () => {}, exit: () => {} });
    await program.parseAsync(['node', 'sage', 'permissions', 'check', '--surface', surface, '--tool', 'Bash', '--input', JSON.stringify({ command }), '--cwd', surfaceWs.project]);
    return (JSON.parse(lines[0]!) as { behavior: string }).behavior;
  };

  /** The decision of the gate the run factory builds for a run of `surface` admitted in the project. */
  const runGets = async (surface: 'terminal' | 'web' | 'chat', command: string) => {
    const [{ openSqliteStore }, { createRunFactory }, { resolveServerPolicy }, { serverGatedRequest }, { builtinToolInfo }] = await Promise.all([
      import('../store/open-store.js'),
      import('../runtime/create-run.js'),
      import('../runtime/server-policy.js'),
      import('../runtime/web-gate.js'),
      import('../permission/index.js'),
    ]);
    const store = await openSqliteStore(':memory:');
    try {
      const policy = resolveServerPolicy({ env: { ...process.env, SAGE_HOME: surfaceWs.home } });
      const factory = createRunFactory({ store, home: surfaceWs.home, server: { policy } });
      const granted = surface === 'terminal' ? {} : serverGatedRequest({ permissionMode: 'default', role: 'user' }, policy);
      const { channel, ...options } = await factory.admitRun({ task: 't', surface, model: 'scripted:/x.json', cwd: surfaceWs.project, ...granted });
      const run = await store.createRun({ id: `run_${surface}`, userId: 'cli', sessionId: 's', channel: channel ?? 'sdk', task: 't', options }, null);
      const gate = await factory.createGate!(run);
      const call = { toolCallId: 'c', toolName: 'Bash', input: { command }, tool: builtinToolInfo('Bash') };
      return (await gate.decide(call, { runId: run.id, sessionId: 's', userId: 'cli', channel: run.channel, cwd: surfaceWs.project })).behavior;
    } finally {
      await store.close();
    }
  };

  it('terminal, web and chat each answer as their run does: the host allow rule is a terminal run\'s only', async () => {
    const commands = ['npm test', 'git push origin main', 'rm -rf build'];
    const seen: Record<string, string[]> = {};
    const expected: Record<string, string[]> = {};
    for (const surface of ['terminal', 'web', 'chat'] as const) {
      seen[surface] = [];
      expected[surface] = [];
      for (const command of commands) {
        seen[surface].push(await check(surface, command));
        expected[surface].push(await runGets(surface, command));
      }
    }
    expect(seen).toEqual(expected);
    expect(seen).toEqual({ terminal: ['allow', 'ask', 'deny'], web: ['ask', 'ask', 'deny'], chat: ['ask', 'ask', 'deny'] });
  });

  it('refuses a surface it does not know', async () => {
    const errors: string[] = [];
    let code = 0;
    const program = new Command().exitOverride();
    registerPermissionsCommand(program, { home: surfaceWs.home, stdout: () => {}, stderr: (l) => errors.push(l), exit: (c) => { code = c; } });
    await program.parseAsync(['node', 'sage', 'permissions', 'check', '--surface', 'subagent', '--tool', 'Bash', '--input', '{}', '--cwd', surfaceWs.project]);
    expect(code).toBe(2);
    expect(errors.join('\n')).toContain('--surface must be one of terminal, detached, web, chat');
  });
});
