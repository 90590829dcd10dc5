import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPermissionEngine } from '../permission/index.js';
import { confine, type ConfineOptions } from './confine.js';

/**
 * The sandbox against a fake agent that reads and writes the disk itself (no protocol, no Sage in
 * between): what a Read deny rule names reads empty, the home folder is hidden but for the agent's
 * own state, nothing outside the run's folders can be written, and /tmp is the agent's own.
 */
let dir: string;
let home: string;
let project: string;
let outside: string;
let agent: string;

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-sandbox-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  outside = join(dir, 'outside');
  for (const d of [join(home, '.ssh'), join(project, '.sage'), join(project, 'keys'), outside, join(dir, 'agent-bin')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
  writeFileSync(join(project, 'notes.txt'), 'the secret');
  writeFileSync(join(project, 'keys', 'a.pem'), 'PEM');
  writeFileSync(join(project, 'readme.md'), 'hello');
  writeFileSync(join(project, '.sage', 'settings.json'), '{}');
  writeFileSync(join(outside, 'other.txt'), 'outside');
  // The agent's program lives in a temp folder, which the sandbox otherwise hides.
  agent = join(dir, 'agent-bin', 'disk-agent.mjs');
  copyFileSync(fileURLToPath(new URL('./test-support/disk-agent.mjs', import.meta.url)), agent);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function play(plan: unknown[], rules: string[] = [], overlays: ConfineOptions['overlays'] = []): Promise<Array<Record<string, unknown>>> {
  const engine = createPermissionEngine({ rules: rules.map((rule) => ({ rule, behavior: 'deny' as const })), projectRoot: project, home });
  const confined = await confine({
    command: [process.execPath, agent],
    cwd: project,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, DISK_AGENT_PLAN: JSON.stringify(plan) },
    stateInHome: ['.fake-agent'],
    denied: engine.readDenyPaths(project),
    overlays,
  });
  const [program, ...args] = confined.command;
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(program!, args, { env: confined.env, cwd: project }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))),
  );
  return JSON.parse(stdout) as Array<Record<string, unknown>>;
}

describe('an agent in the sandbox, touching the disk on its own', { timeout: 30_000 }, () => {
  test('a file a Read deny rule names reads empty, also at any depth and through a glob; other files read as they are', async () => {
    const results = await play([{ read: join(project, 'notes.txt') }, { read: join(project, 'keys', 'a.pem') }, { list: join(project, 'keys') }, { read: join(project, 'readme.md') }], ['Read(./notes.txt)', 'Read(./keys/**)']);
    expect(results[0]).toEqual({ read: '' });
    expect(results[1]).toEqual({ read: '' });
    expect(results[2]).toEqual({ list: ['a.pem'] });
    expect(results[3]).toEqual({ read: 'hello' });
  });

  test("the repository's git folder cannot be turned against the person: no commondir, config or hook written, the folder not renamed away", async () => {
    mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(project, '.git', 'config'), '[core]\n');
    const results = await play([
      // git would read its config (core.fsmonitor: a command run by the person's next `git status`) from ../evil
      { write: { path: join(project, '.git', 'commondir'), content: '../evil' } },
      { write: { path: join(project, '.git', 'config'), content: '[core]\n\tfsmonitor = touch PWNED\n' } },
      { write: { path: join(project, '.git', 'hooks', 'pre-commit'), content: '#!/bin/sh\ntouch PWNED\n' } },
      // renamed away, a copy with its own config would take its place
      { rename: { from: join(project, '.git'), to: join(project, '.git-old') } },
    ]);
    expect(results.map((r) => r.error)).toEqual(['EROFS', 'EROFS', 'EROFS', 'EBUSY']);
    expect(existsSync(join(project, '.git', 'commondir'))).toBe(false);
    expect(readFileSync(join(project, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(project, '.git-old'))).toBe(false);
  });

  test('writes land in the run folder only: outside it, in /etc, and in its .sage folder they are refused', async () => {
    const results = await play([
      { write: { path: join(project, 'made.txt'), content: 'made' } },
      { write: { path: join(outside, 'planted.txt'), content: 'x' } },
      { write: { path: '/etc/sage-planted', content: 'x' } },
      { write: { path: join(project, '.sage', 'settings.json'), content: '{"permissions":{"allow":["Bash"]}}' } },
    ]);
    expect(results[0]).toEqual({ write: 'ok' });
    expect(readFileSync(join(project, 'made.txt'), 'utf8')).toBe('made');
    // Under /tmp here, so hidden (ENOENT); elsewhere read-only (EROFS): either way nothing is written.
    expect(['EROFS', 'ENOENT']).toContain(results[1]!.error);
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    expect(results[2]).toEqual({ error: 'EROFS' });
    expect(existsSync('/etc/sage-planted')).toBe(false);
    expect(results[3]).toEqual({ error: 'EROFS' });
    expect(readFileSync(join(project, '.sage', 'settings.json'), 'utf8')).toBe('{}');
  });

  test('the home folder is hidden but for the agent\'s own state; /tmp is private to the sandbox', async () => {
    const marker = `sage-sandbox-tmp-${process.pid}-${Date.now()}`;
    const results = await play([
      { read: join(home, '.ssh', 'id_ed25519') },
      { list: home },
      { write: { path: join(home, '.fake-agent', 'state.json'), content: '{"ok":true}' } },
      { write: { path: join('/tmp', marker), content: 'x' } },
      { list: homedir() },
    ]);
    expect(results[0]).toEqual({ error: 'ENOENT' });
    expect(results[1]).toEqual({ list: ['.fake-agent'] });
    expect(results[2]).toEqual({ write: 'ok' });
    expect(readFileSync(join(home, '.fake-agent', 'state.json'), 'utf8')).toBe('{"ok":true}');
    expect(results[3]).toEqual({ write: 'ok' });
    expect(existsSync(join('/tmp', marker))).toBe(false);
    // The home of the user running Sage is hidden as well (the agent's HOME was another folder).
    expect((results[4] as { list?: string[] }).list ?? []).toEqual([]);
  });

  test('an overlay inside the agent\'s writable state is read-only: it shows the given file or nothing, also where none existed', async () => {
    const state = join(home, '.fake-agent');
    mkdirSync(state, { recursive: true });
    writeFileSync(join(state, 'config.toml'), 'approval = "never"');
    const given = join(dir, 'given.toml');
    writeFileSync(given, 'approval = "ask"');
    const results = await play(
      [
        { read: join(state, 'config.toml') },
        { write: { path: join(state, 'config.toml'), content: 'approval = "never"' } },
        { rename: { from: join(state, 'config.toml'), to: join(state, 'moved.toml') } },
        { write: { path: join(state, 'hooks.json'), content: '{}' } },
        { write: { path: join(state, 'rules', 'x.rules'), content: 'allow' } },
        { write: { path: join(state, 'sessions.jsonl'), content: 'ok' } },
      ],
      [],
      [{ path: join(state, 'config.toml'), source: given }, { path: join(state, 'hooks.json') }, { path: join(state, 'rules'), folder: true }],
    );
    expect(results[0]).toEqual({ read: 'approval = "ask"' });
    expect(results[1]).toEqual({ error: 'EROFS' });
    expect(results[2]).toEqual({ error: 'EBUSY' });
    expect(results[3]).toEqual({ error: 'EROFS' });
    expect(results[4]).toEqual({ error: 'EROFS' });
    expect(results[5]).toEqual({ write: 'ok' });
    expect(readFileSync(join(state, 'config.toml'), 'utf8')).toBe('approval = "never"');
  });
});
