import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, freshWorkDir } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

// `sage serve`'s log: lines a person reads on a terminal, JSON for whatever collects it otherwise.
describe('sage serve log format', () => {
  let session: TmuxSession | undefined;
  afterEach(() => session?.kill());

  it('writes human lines on a terminal, Ctrl+C included', async () => {
    const cwd = freshWorkDir();
    session = new TmuxSession(['serve', '--port', '0'], { cwd, env: { SAGE_HOME: cwd, SAGE_MANAGED_SETTINGS: '', SAGE_MODEL: '', SAGE_DATABASE_URL: '' } });
    const screen = await session.waitFor(/\d\d:\d\d:\d\d INFO {2}sage server listening url=http/);
    expect(screen).not.toContain('{"level"');
    session.keys('C-c');
    const after = await session.waitFor(/INFO {2}shutting down signal=SIGINT[\s\S]*INFO {2}sage server stopped/);
    expect(after).not.toContain('{"level"');
    expect(await session.exitCode()).toBe(0);
  });

  it('writes JSON when not on a terminal, and with --log-format json on one', async () => {
    const piped = await serveUntilListening([]);
    expect(piped).toMatch(/^\{"level":30,.*"msg":"sage server listening"\}$/m);
    const pretty = await serveUntilListening(['--log-format', 'pretty']);
    expect(pretty).toMatch(/^\d\d:\d\d:\d\d INFO {2}sage server listening /m);
    const cwd = freshWorkDir();
    session = new TmuxSession(['serve', '--port', '0', '--log-format', 'json'], { cwd, env: { SAGE_HOME: cwd, SAGE_MANAGED_SETTINGS: '', SAGE_MODEL: '', SAGE_DATABASE_URL: '' } });
    await session.waitFor('"msg":"sage server listening"');
  });
});

/** Everything `sage serve` printed (stdout) until it logged that it listens; then it is stopped. */
function serveUntilListening(args: string[]): Promise<string> {
  const cwd = freshWorkDir();
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', ...args], { cwd, env: { ...process.env, SAGE_HOME: cwd, SAGE_MANAGED_SETTINGS: '', SAGE_MODEL: '', SAGE_DATABASE_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('sage server listening')) {
        child.kill('SIGTERM');
        resolve(out);
      }
    });
    child.once('exit', () => reject(new Error(`sage serve exited:\n${out}`)));
  });
}
