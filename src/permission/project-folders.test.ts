import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPermissionEngine } from './engine.js';
import { findProjectRoot, foldersUpTo } from './project-folders.js';
import { loadSettings, settingsPaths } from './settings-loader.js';
import { gateCall, gateContext } from './test-support/test-fixtures.js';
import { trustFolder } from './trusted-folders.js';

let base: string;
let home: string;
let p1: string;
let sub: string;
const write = (file: string, json: unknown) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(json));
};

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), 'sage-project-folders-')));
  home = path.join(base, 'home');
  p1 = path.join(base, 'work', 'p1');
  sub = path.join(p1, 'sub');
  mkdirSync(path.join(home, '.sage'), { recursive: true });
  mkdirSync(sub, { recursive: true });
  writeFileSync(path.join(sub, 'secret.txt'), 'the secret\n');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('the project root of a folder', () => {
  it('is the nearest folder with .git (a folder or a worktree\'s file), never above the bound; without one, the bound, else the folder itself', () => {
    expect(findProjectRoot(sub)).toBe(sub);
    expect(findProjectRoot(sub, path.join(base, 'work'))).toBe(path.join(base, 'work'));
    writeFileSync(path.join(p1, '.git'), 'gitdir: /elsewhere\n');
    expect(findProjectRoot(sub)).toBe(p1);
    expect(findProjectRoot(sub, base)).toBe(p1);
    // A .git above the server's root is not reached: the root bounds the walk.
    expect(findProjectRoot(sub, sub)).toBe(sub);
    // A bound that does not hold the folder is ignored.
    expect(findProjectRoot(sub, home)).toBe(p1);
    expect(foldersUpTo(sub, base)).toEqual([sub, p1, path.join(base, 'work'), base]);
    expect(foldersUpTo(sub, home)).toEqual([sub]);
  });
});

describe('the settings of the folders from cwd up to the project root', () => {
  const denyInP1 = () => write(settingsPaths(p1, home).local, { permissions: { deny: ['Read(secret.txt)', 'Bash(cat *)'], allow: ['Bash(touch *)'] }, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }] } });

  it('a run in p1/sub is denied what p1 denies: Read(secret.txt) of p1/sub/secret.txt, and cat', async () => {
    mkdirSync(path.join(p1, '.git'));
    denyInP1();
    const settings = loadSettings({ projectRoot: sub, home });
    expect(settings.rules.filter((r) => r.behavior === 'deny').map((r) => [r.rule, r.root])).toEqual([['Read(secret.txt)', p1], ['Bash(cat *)', p1]]);
    const engine = createPermissionEngine({ settings, home, projectRoot: sub });
    const ctx = gateContext(sub);
    expect(await engine.decide(gateCall('Read', { file_path: path.join(sub, 'secret.txt') }), ctx)).toMatchObject({ behavior: 'deny', rule: 'Read(secret.txt)' });
    expect(await engine.decide(gateCall('Bash', { command: 'cat secret.txt' }), ctx)).toMatchObject({ behavior: 'deny' });
    expect(await engine.decide(gateCall('Bash', { command: 'cat notes.txt' }), ctx)).toMatchObject({ behavior: 'deny', rule: 'Bash(cat *)' });
  });

  it('the folder above gives its allow rules and hooks only once it is trusted itself (trusting the subfolder is not enough)', () => {
    mkdirSync(path.join(p1, '.git'));
    denyInP1();
    trustFolder(home, sub);
    const untrusted = loadSettings({ projectRoot: sub, home });
    expect(untrusted.rules.filter((r) => r.behavior === 'allow')).toEqual([]);
    expect(untrusted.hooks.preToolUse).toEqual([]);
    expect(untrusted.problems).toContainEqual(expect.objectContaining({ file: settingsPaths(p1, home).local, severity: 'warning', problem: expect.stringContaining('not applied until this folder is trusted') }));
    expect(untrusted.folders.map((f) => [f.folder, f.trusted])).toEqual([[sub, true], [p1, false]]);
    trustFolder(home, p1);
    const trusted = loadSettings({ projectRoot: sub, home });
    expect(trusted.rules.filter((r) => r.behavior === 'allow').map((r) => r.rule)).toEqual(['Bash(touch *)']);
    expect(trusted.hooks.preToolUse).toHaveLength(1);
  });

  it('without .git only the folder itself is read, unless a bound (the server root) says how far up', () => {
    denyInP1();
    expect(loadSettings({ projectRoot: sub, home }).rules).toEqual([]);
    expect(loadSettings({ projectRoot: sub, home, upTo: p1 }).rules.map((r) => r.rule)).toEqual(['Read(secret.txt)', 'Bash(cat *)']);
  });

  it('a broken file above is an error like the folder\'s own (the run does not start without its denies)', () => {
    mkdirSync(path.join(p1, '.git'));
    write(settingsPaths(p1, home).project, { permissions: { deny: ['Bash(cat *'] } });
    expect(loadSettings({ projectRoot: sub, home }).problems).toContainEqual(expect.objectContaining({ file: settingsPaths(p1, home).project, severity: 'error' }));
  });
});
