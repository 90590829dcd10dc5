import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, writeScript } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A project whose only trust-gated file is a skill: before, nothing was asked about it. */
function projectWithSkill(): { project: string; home: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sage-offer-')));
  const project = join(base, 'project');
  mkdirSync(join(project, '.sage', 'skills', 'deploy'), { recursive: true });
  writeFileSync(join(project, '.sage', 'skills', 'deploy', 'SKILL.md'), '---\nname: deploy\ndescription: Deploy the app\n---\nDeploy it.\n');
  return { project, home: join(base, 'home') };
}

const trusted = (home: string): string[] => {
  const file = join(home, '.sage', 'trusted-folders.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { folders: string[] }).folders : [];
};

describe.skipIf(!hasTmux && !process.env.CI)('sage offers to trust a folder with its own skills (tmux)', { timeout: 60_000 }, () => {
  let session: TmuxSession | undefined;
  afterEach(() => session?.kill());

  it('yes: the folder is trusted as sage trust records it, and the session starts', async () => {
    const { project, home } = projectWithSkill();
    const script = writeScript([{ text: 'hello' }]);
    session = new TmuxSession(['--model', `scripted:${script}`], { cwd: project, env: { SAGE_HOME: home } });
    const asked = await session.waitFor('Do you trust this folder?');
    expect(asked).toContain('Its own files turn on 1 skill');
    await session.choose('Yes, trust it');
    const screen = await session.waitFor('/help for commands');
    expect(screen).toContain(`Take it back with: sage trust --revoke ${project}`);
    expect(trusted(home)).toEqual([project]);
    session.type('/exit');
    session.keys('Enter');
    expect(await session.exitCode()).toBe(0);
  });

  it('no: the session goes on untrusted, says what it ignores, and the skill is not offered', async () => {
    const { project, home } = projectWithSkill();
    const script = writeScript([{ text: 'hello' }]);
    session = new TmuxSession(['--model', `scripted:${script}`], { cwd: project, env: { SAGE_HOME: home } });
    await session.choose('No, go on without them');
    const screen = await session.waitFor('/help for commands');
    expect(screen).toContain(`Not trusted: ignoring its 1 skill. Trust it later with: sage trust ${project}`);
    session.type('/help');
    session.keys('Enter');
    const help = await session.waitFor('/exit   end the session');
    expect(help).not.toContain('/deploy');
    expect(trusted(home)).toEqual([]);
    session.type('/exit');
    session.keys('Enter');
    expect(await session.exitCode()).toBe(0);
  });
});

describe('sage run without a terminal in an untrusted folder', () => {
  it('asks nothing and prints one line naming what is ignored and the command that trusts it', async () => {
    const { project, home } = projectWithSkill();
    const script = writeScript([{ text: 'hello' }]);
    const result = await runCli(['run', 'hi', '--model', `scripted:${script}`, '--batch'], { cwd: project, env: { SAGE_HOME: home } });
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((l) => l.includes('untrusted folder'));
    expect(lines).toEqual([`untrusted folder: ${project}: ignoring its 1 skill (deny and ask rules apply). Trust it with: sage trust ${project}`]);
    expect(trusted(home)).toEqual([]);
  });

  it('sage run --detach says the same before it returns', async () => {
    const { project, home } = projectWithSkill();
    const script = writeScript([{ text: 'hello' }]);
    const result = await runCli(['run', 'hi', '--model', `scripted:${script}`, '--detach'], { cwd: project, env: { SAGE_HOME: home } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`untrusted folder: ${project}: ignoring its 1 skill (deny and ask rules apply). Trust it with: sage trust ${project}`);
  });
});
