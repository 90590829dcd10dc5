import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshWorkDir, runCli } from '../support/cli.js';

// Reading the runs of a folder that has none answers so, and leaves the folder as it was.
describe('read-only commands create no database', () => {
  const env = { SAGE_DATABASE_URL: '' };

  it('sage runs list says there are no runs', async () => {
    const cwd = freshWorkDir();
    const text = await runCli(['runs', 'list'], { cwd, env });
    expect(text).toMatchObject({ code: 0, stdout: 'no runs\n' });
    const json = await runCli(['runs', 'list', '--json'], { cwd, env });
    expect(json).toMatchObject({ code: 0, stdout: '[]\n' });
    expect(existsSync(join(cwd, '.sage'))).toBe(false);
  });

  it('sage interactions list says there are no requests', async () => {
    const cwd = freshWorkDir();
    expect(await runCli(['interactions', 'list'], { cwd, env })).toMatchObject({ code: 0, stdout: 'no requests\n' });
    expect(await runCli(['interactions', 'list', '--pending'], { cwd, env })).toMatchObject({ code: 0, stdout: 'no pending requests\n' });
    expect(existsSync(join(cwd, '.sage'))).toBe(false);
  });

  it('sage runs show, resume, cancel and close say the run does not exist; respond that the request does not exist', async () => {
    const cwd = freshWorkDir();
    for (const args of [['runs', 'show', 'nope'], ['runs', 'resume', 'nope'], ['runs', 'cancel', 'nope'], ['runs', 'close', 'nope']]) {
      const result = await runCli(args, { cwd, env });
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toMatch(/nope/);
      expect(result.stderr, args.join(' ')).toMatch(/not found|does not exist|no run/i);
    }
    const respond = await runCli(['respond', 'nope', '--allow'], { cwd, env });
    expect(respond.code).toBe(1);
    expect(respond.stderr).toMatch(/nope/);
    expect(existsSync(join(cwd, '.sage'))).toBe(false);
  });

  it('a --db file that does not exist is not created by a read either', async () => {
    const cwd = freshWorkDir();
    expect(await runCli(['runs', 'list', '--db', 'other.db'], { cwd, env })).toMatchObject({ code: 0, stdout: 'no runs\n' });
    expect(existsSync(join(cwd, 'other.db'))).toBe(false);
  });
});
