import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeScript } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function project(): { dir: string; home: string } {
  return { dir: mkdtempSync(join(tmpdir(), 'sage-prompt-')), home: mkdtempSync(join(tmpdir(), 'sage-home-')) };
}

describe.skipIf(!hasTmux && !process.env.CI)('the approval prompt in a real terminal (tmux)', { timeout: 60_000 }, () => {
  let session: TmuxSession | undefined;
  afterEach(() => session?.kill());

  it('a HIGH-risk command says so in plain words, offers no "always", and a stray Enter denies it', async () => {
    const { dir, home } = project();
    mkdirSync(join(dir, 'build'));
    writeFileSync(join(dir, 'build', 'keep.txt'), 'keep\n');
    const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command: 'rm -rf build && git push --force origin main' } }] }, { text: 'Stopped.' }]);
    session = new TmuxSession(['run', 'clean and push', '--model', `scripted:${script}`, '--cwd', dir], { cwd: dir, env: { SAGE_HOME: home } });
    const prompt = await session.waitFor('❯ ');
    expect(prompt).toContain('High risk');
    expect(prompt).toContain('This can delete or overwrite things that are hard to get back');
    expect(prompt).not.toContain('Allow always');
    expect(prompt).toContain('❯ Deny');
    expect(prompt).not.toContain('❯ Allow once');
    session.keys('Enter');
    const screen = await session.waitFor('Done');
    expect(existsSync(join(dir, 'build', 'keep.txt'))).toBe(true);
    expect(screen).toContain('You denied it');
    expect(screen).not.toContain('Do not retry');
  });

  it('a Write shows the change as a diff before approval', async () => {
    const { dir, home } = project();
    writeFileSync(join(dir, 'notes.txt'), 'alpha\nbeta\n');
    const script = writeScript([
      { toolCalls: [{ name: 'Read', input: { file_path: 'notes.txt' } }] },
      { toolCalls: [{ name: 'Write', input: { file_path: 'notes.txt', content: 'alpha\ngamma\n' } }] },
      { text: 'Written.' },
    ]);
    session = new TmuxSession(['run', 'rewrite notes', '--model', `scripted:${script}`, '--cwd', dir], { cwd: dir, env: { SAGE_HOME: home } });
    const prompt = await session.waitFor('❯ Allow once');
    expect(prompt).toContain('Write wants permission');
    expect(prompt).toMatch(/-beta/);
    expect(prompt).toMatch(/\+gamma/);
    expect(prompt).not.toContain('"content"');
    session.keys('Enter');
    await session.waitFor('Done');
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('alpha\ngamma\n');
  });

  it('prints what a person needs, not the instructions meant for the model', async () => {
    const { dir, home } = project();
    const question = { questions: [{ question: 'Which database?', header: 'Database', options: [{ label: 'SQLite', description: 'embedded' }, { label: 'Postgres', description: 'server' }] }] };
    const script = writeScript([{ toolCalls: [{ name: 'AskUserQuestion', input: question }] }, { text: 'Using it.' }]);
    session = new TmuxSession(['run', 'pick a database', '--model', `scripted:${script}`, '--cwd', dir], { cwd: dir, env: { SAGE_HOME: home } });
    await session.waitFor('❯ SQLite');
    session.keys('Enter');
    const screen = await session.waitFor('Done');
    expect(screen).toContain('SQLite');
    expect(screen).not.toContain('You can now continue');
  });
});
