import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPermissionEngine } from './engine.js';
import { SettingsFileError } from './errors.js';
import { loadSettings, settingsPaths } from './settings-loader.js';
import { addRuleToSettingsFile, removeRuleFromSettingsFile } from './settings-writer.js';
import { gateCall, gateContext, tempWorkspace } from './test-support/test-fixtures.js';
import { trustFolder } from './trusted-folders.js';

let ws: ReturnType<typeof tempWorkspace>;
const write = (file: string, json: unknown) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json));
};

beforeEach(() => {
  ws = tempWorkspace();
  mkdirSync(ws.project, { recursive: true });
});
afterEach(() => rmSync(ws.base, { recursive: true, force: true }));

describe('settings files', () => {
  it('merges rule lists across scopes and takes scalars by precedence: managed > cli > local > project > user', () => {
    const files = settingsPaths(ws.project, ws.home);
    const managed = path.join(ws.base, 'managed.json');
    write(files.user, { permissions: { allow: ['Bash(npm test)'], defaultMode: 'plan' }, approval: { strictMode: true, memoryWindowSeconds: 10 } });
    write(files.project, { permissions: { deny: ['Bash(curl *)'], defaultMode: 'acceptEdits' }, approval: { memoryWindowSeconds: 20 } });
    write(files.local, { permissions: { ask: ['Bash(git push *)'] }, approval: { memoryWindowSeconds: 30 } });
    write(managed, { approval: { memoryWindowSeconds: 99 } });
    trustFolder(ws.home, ws.project);
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home, managedFile: managed, cli: { mode: 'dontAsk' } });
    expect(settings.rules.map((r) => `${r.behavior}:${r.rule}`).sort()).toEqual(['allow:Bash(npm test)', 'ask:Bash(git push *)', 'deny:Bash(curl *)']);
    expect(settings.approval.memoryWindowSeconds).toBe(99);
    expect(settings.defaultMode).toBe('dontAsk');
    expect(settings.approval.strictMode).toBe(true);
    const noCli = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(noCli.defaultMode).toBe('acceptEdits');
    expect(noCli.approval.memoryWindowSeconds).toBe(30);
  });

  it('leaves approval.timeoutSeconds unset when no file sets it, and takes the managed file\'s over the others', () => {
    const files = settingsPaths(ws.project, ws.home);
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).approval.timeoutSeconds).toBeUndefined();
    write(files.user, { approval: { timeoutSeconds: 30 } });
    write(files.project, { approval: { timeoutSeconds: 20 } });
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).approval.timeoutSeconds).toBe(30);
    trustFolder(ws.home, ws.project);
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).approval.timeoutSeconds).toBe(20);
    const managed = path.join(ws.base, 'managed.json');
    write(managed, { approval: { timeoutSeconds: 90 } });
    expect(loadSettings({ projectRoot: ws.project, home: ws.home, managedFile: managed }).approval.timeoutSeconds).toBe(90);
  });

  it('applies an untrusted repository\'s deny and ask rules at once, but not its allow rules, hooks or mode', async () => {
    write(settingsPaths(ws.project, ws.home).project, {
      permissions: { deny: ['Bash(curl *)'], allow: ['Bash(rm *)'], defaultMode: 'bypassPermissions' },
      approval: { enabled: false },
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'echo {}' }] }] },
    });
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.trusted).toBe(false);
    expect(settings.rules).toEqual([expect.objectContaining({ rule: 'Bash(curl *)', behavior: 'deny' })]);
    expect(settings.defaultMode).toBeUndefined();
    expect(settings.approval.enabled).toBe(true);
    expect(settings.hooks.preToolUse).toHaveLength(0);
    expect(settings.problems.map((p) => p.problem).join('\n')).toContain('not applied until this folder is trusted');
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, settings });
    expect((await engine.decide(gateCall('Bash', { command: 'rm x' }), gateContext(ws.project))).behavior).toBe('ask');
    trustFolder(ws.home, ws.project);
    const trusted = createPermissionEngine({ home: ws.home, projectRoot: ws.project, settings: loadSettings({ projectRoot: ws.project, home: ws.home }) });
    expect(trusted.mode).toBe('bypassPermissions');
  });

  it('reports invalid files naming file, key and problem, and keeps their deny rules', () => {
    const file = settingsPaths(ws.project, ws.home).project;
    write(file, { permissions: { deny: ['Bash(curl *)', 'Bash(rm -rf'], defaultMode: 'yolo' } });
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.problems).toContainEqual(expect.objectContaining({ file, key: 'permissions.defaultMode' }));
    expect(settings.rules.map((r) => r.rule)).toContain('Bash(curl *)');
    write(file, '{ not json');
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).problems[0]).toMatchObject({ file, key: '(root)', severity: 'error' });
  });

  it('reports rules that can never match: malformed, unknown tool, allow glob on tool names', () => {
    write(settingsPaths(ws.project, ws.home).user, { permissions: { deny: ['Bash(rm -rf', 'Frobnicate(x)'], allow: ['*'], ask: ['Glob(src/**)'] } });
    const problems = loadSettings({ projectRoot: ws.project, home: ws.home }).problems.map((p) => `${p.key} ${p.problem}`);
    expect(problems.some((p) => p.startsWith('permissions.deny[0]') && p.includes('never match'))).toBe(true);
    expect(problems.some((p) => p.startsWith('permissions.deny[1]') && p.includes('does not know'))).toBe(true);
    expect(problems.some((p) => p.startsWith('permissions.allow[0]'))).toBe(true);
    expect(problems.some((p) => p.startsWith('permissions.ask[0]') && p.includes('Read('))).toBe(true);
  });

  it('rewrites atomically, keeping other keys, and refuses to overwrite a broken file', () => {
    const file = settingsPaths(ws.project, ws.home).project;
    write(file, { model: 'x', permissions: { allow: ['Bash(ls)'], deny: ['Bash(curl *)'] }, hooks: {} });
    addRuleToSettingsFile(file, 'allow', 'Bash(npm test)');
    addRuleToSettingsFile(file, 'allow', 'Bash(npm test)');
    const json = JSON.parse(readFileSync(file, 'utf8'));
    expect(json).toEqual({ model: 'x', permissions: { allow: ['Bash(ls)', 'Bash(npm test)'], deny: ['Bash(curl *)'] }, hooks: {} });
    expect(readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(removeRuleFromSettingsFile(file, 'Bash(ls)')).toBe(true);
    write(file, '{ broken');
    expect(() => addRuleToSettingsFile(file, 'allow', 'Bash(x)')).toThrow(SettingsFileError);
    expect(readFileSync(file, 'utf8')).toBe('{ broken');
  });

  it('"allow always" saves one narrow rule per part to the chosen file; local settings get git-ignored', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project });
    const ctx = gateContext(ws.project);
    const call = gateCall('Bash', { command: 'npm run build && make dist' });
    const decision = await engine.decide(call, ctx);
    expect(decision.suggestions?.map((s) => s.rule)).toEqual(['Bash(npm run build)', 'Bash(make dist)']);
    await engine.recordAnswer({ call, decision, approved: true, remember: 'local' }, ctx);
    const local = settingsPaths(ws.project, ws.home).local;
    expect(JSON.parse(readFileSync(local, 'utf8')).permissions.allow).toEqual(['Bash(npm run build)', 'Bash(make dist)']);
    expect(readFileSync(path.join(ws.project, '.sage', '.gitignore'), 'utf8')).toContain('settings.local.json');
    expect((await engine.decide(call, ctx)).behavior).toBe('allow');
    expect((await engine.decide(gateCall('Bash', { command: 'npm run build --x' }), ctx)).behavior).toBe('ask');
  });

  it('offers no "always" for commands the prompt cannot show faithfully, and escapes globs in saved rules', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project });
    const ctx = gateContext(ws.project);
    expect((await engine.decide(gateCall('Bash', { command: 'npm run $TARGET' }), ctx)).suggestions).toEqual([]);
    const write = await engine.decide(gateCall('Write', { file_path: 'src/[id].ts', content: '' }), ctx);
    expect(write.suggestions?.map((s) => s.rule)).toEqual(['Edit(./src/\\[id\\].ts)']);
  });

  it('session "always" covers the other pending asks it now allows (opencode semantics)', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project });
    const ctx = gateContext(ws.project);
    const pending = [
      { id: 'a', call: gateCall('Bash', { command: 'npm test' }) },
      { id: 'b', call: gateCall('Bash', { command: 'npm test -- --watch' }) },
      { id: 'c', call: gateCall('Bash', { command: 'npm publish' }) },
    ];
    expect((await engine.coveredAsks(pending, 'Bash(npm test *)', ctx)).map((p) => p.id)).toEqual(['a', 'b']);
    expect(existsSync(settingsPaths(ws.project, ws.home).local)).toBe(false);
  });

  it('switches modes during a run and rejects unknown ones', async () => {
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project });
    const ctx = gateContext(ws.project);
    const edit = gateCall('Edit', { file_path: 'a.ts', old_string: 'a', new_string: 'b' });
    expect((await engine.decide(edit, ctx)).behavior).toBe('ask');
    engine.setMode('acceptEdits');
    expect(await engine.decide(edit, ctx)).toMatchObject({ behavior: 'allow', source: 'mode', mode: 'acceptEdits' });
    engine.setMode('plan');
    expect((await engine.decide(edit, ctx)).behavior).toBe('deny');
    expect(() => engine.setMode('yolo' as never)).toThrow(/Unknown permission mode/);
  });

  it('loads a file with a hook type Sage does not run, warning about that hook and keeping every rule', async () => {
    const file = settingsPaths(ws.project, ws.home).project;
    write(file, {
      permissions: { allow: ['Bash(npm test *)'], deny: ['Bash(rm *)'] },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt', prompt: 'Is this safe?' }, { type: 'command', command: 'true' }] }] },
    });
    trustFolder(ws.home, ws.project);
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.problems).toEqual([expect.objectContaining({ file, key: 'hooks.PreToolUse[0].hooks[0]', severity: 'warning' })]);
    expect(settings.problems[0]!.problem).toContain('"prompt"');
    expect(settings.rules.map((r) => r.rule)).toEqual(['Bash(rm *)', 'Bash(npm test *)']);
    expect(settings.hooks.preToolUse).toHaveLength(1);
  });

  it('reports a command hook without a command as an error, and still loads the rules', () => {
    const file = settingsPaths(ws.project, ws.home).project;
    write(file, { permissions: { allow: ['Bash(ls *)'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command' }] }] } });
    trustFolder(ws.home, ws.project);
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.problems).toEqual([expect.objectContaining({ key: 'hooks.PreToolUse[0].hooks[0]', severity: 'error' })]);
    expect(settings.rules.map((r) => r.rule)).toEqual(['Bash(ls *)']);
  });

  it('warns that Write(path) allow rules are ignored, as Claude Code does, and never allows by them', async () => {
    const file = settingsPaths(ws.project, ws.home).project;
    write(file, { permissions: { allow: ['Write(src/**)'], deny: ['Write(./locked/**)'] } });
    trustFolder(ws.home, ws.project);
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.problems).toEqual([expect.objectContaining({ key: 'permissions.allow[0]', severity: 'warning' })]);
    expect(settings.problems[0]!.problem).toContain('Edit(src/**)');
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, settings });
    const ctx = gateContext(ws.project);
    expect((await engine.decide(gateCall('Write', { file_path: 'src/a.ts', content: '' }), ctx)).behavior).toBe('ask');
    expect((await engine.decide(gateCall('Write', { file_path: 'locked/a.ts', content: '' }), ctx)).behavior).toBe('deny');
  });

  it('knows the tool names Claude Code uses today, so their rules are not reported as unreachable', () => {
    const file = settingsPaths(ws.project, ws.home).project;
    write(file, { permissions: { deny: ['Agent', 'PowerShell', 'SlashCommand', 'MultiEdit', 'NotebookEdit', 'WebFetch(domain:*.example.com)', 'mcp__github'] } });
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.problems).toEqual([]);
    expect(settings.rules).toHaveLength(7);
  });

  it('rejects a malformed domain rule as an error', () => {
    const file = settingsPaths(ws.project, ws.home).project;
    write(file, { permissions: { deny: ['WebFetch(domain:https://x.com/)'] } });
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.problems).toEqual([expect.objectContaining({ severity: 'error' })]);
  });

  it('disableBypassPermissionsMode keeps the engine out of bypass mode, at start and on setMode', async () => {
    write(settingsPaths(ws.project, ws.home).project, { permissions: { disableBypassPermissionsMode: 'disable' } });
    const settings = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(settings.bypassDisabled).toBe(true);
    const engine = createPermissionEngine({ home: ws.home, projectRoot: ws.project, settings, mode: 'bypassPermissions' });
    expect(engine.mode).toBe('default');
    expect((await engine.decide(gateCall('Bash', { command: 'frobnicate' }), gateContext(ws.project))).behavior).toBe('ask');
    engine.setMode('acceptEdits');
    engine.setMode('bypassPermissions');
    expect(engine.mode).toBe('acceptEdits');
  });
});

describe('settings loaded again (kept per process while the files are unchanged)', () => {
  // Files written more than the loader's "recent" window ago (100 ms) are the ones it keeps.
  const age = () => new Promise((resolve) => setTimeout(resolve, 150));

  it('gives each caller its own copy: changing one load does not change the next', async () => {
    const files = settingsPaths(ws.project, ws.home);
    write(files.user, { permissions: { deny: ['Bash(curl *)'] } });
    await age();
    const first = loadSettings({ projectRoot: ws.project, home: ws.home });
    first.rules.push({ rule: 'Bash(*)', behavior: 'allow', source: 'test', root: ws.project });
    first.approval.toolOverrides['Bash'] = false;
    const second = loadSettings({ projectRoot: ws.project, home: ws.home });
    expect(second.rules.map((r) => `${r.behavior}:${r.rule}`)).toEqual(['deny:Bash(curl *)']);
    expect(second.approval.toolOverrides).toEqual({});
  });

  it('reads a file again once it changed, appeared or went, even at the same size within one clock tick', async () => {
    const files = settingsPaths(ws.project, ws.home);
    write(files.user, { permissions: { deny: ['Bash(curl *)'] } });
    await age();
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).rules.map((r) => r.rule)).toEqual(['Bash(curl *)']);
    write(files.user, { permissions: { deny: ['Bash(wget *)'] } });
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).rules.map((r) => r.rule)).toEqual(['Bash(wget *)']);
    // Same size again, right after that load (file times tick every few ms: it may keep its mtime).
    write(files.user, { permissions: { deny: ['Bash(curl *)'] } });
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).rules.map((r) => r.rule)).toEqual(['Bash(curl *)']);
    write(files.user, { permissions: { deny: ['Bash(ncat *)'] } });
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).rules.map((r) => r.rule)).toEqual(['Bash(ncat *)']);
    // A project file appears; the folder is trusted later (the trust file changes what applies).
    write(files.project, { permissions: { allow: ['Bash(npm test)'] } });
    await age();
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).rules.map((r) => `${r.behavior}:${r.rule}`)).toEqual(['deny:Bash(ncat *)']);
    trustFolder(ws.home, ws.project);
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).rules.map((r) => `${r.behavior}:${r.rule}`).sort()).toEqual(['allow:Bash(npm test)', 'deny:Bash(ncat *)']);
    rmSync(files.project);
    expect(loadSettings({ projectRoot: ws.project, home: ws.home }).rules.map((r) => `${r.behavior}:${r.rule}`)).toEqual(['deny:Bash(ncat *)']);
  });
});
