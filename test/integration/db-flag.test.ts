// `--db` to a path that cannot be written is the flag's mistake on every command that opens the
// store: one line naming the path, exit 2, nothing run. Build first (npm run build).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, writeScript } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sage-db-flag-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// A path through a regular file: no process can create a database there.
const file = join(dir, 'a-file');
writeFileSync(file, 'not a folder');
const bad = join(file, 'sage.db');

describe('--db that cannot be written', { timeout: 240_000 }, () => {
  const script = writeScript([{ text: 'done' }]);
  const commands: string[][] = [
    ['run', 'a task', '--model', `scripted:${script}`],
    ['run', 'a task', '--detach', '--model', `scripted:${script}`],
    ['runs', 'list'],
    ['runs', 'show', 'run_x'],
    ['runs', 'resume', 'run_x'],
    ['runs', 'cancel', 'run_x'],
    ['runs', 'recover'],
    ['runs', 'prune', '--older-than', '1d'],
    ['respond', 'run_x:call:permission', '--allow'],
    ['interactions', 'list'],
    ['serve', '--port', '0'],
  ];
  it.each(commands.map((c) => [c.join(' '), c] as const))('sage %s exits 2 with one line naming the path and why', async (_name, args) => {
    const result = await runCli([...args, '--db', bad], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 60_000 });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(`--db ${bad} cannot be created: ${file} is a file, not a folder`)]);
    expect(result.stdout).toBe('');
  });

  it('--ephemeral with --db is refused (an ephemeral run is not stored)', async () => {
    const result = await runCli(['run', 'a task', '--ephemeral', '--db', join(dir, 'x.db'), '--model', `scripted:${script}`], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--ephemeral and --db exclude each other');
  });
});

describe('where a foreground run is stored', { timeout: 120_000 }, () => {
  const script = writeScript([{ text: 'done' }]);
  const env = { SAGE_HOME: dir, SAGE_DATABASE_URL: '' };

  it('sage run records the run in .sage/sage.db of the working directory, and sage runs list shows it', async () => {
    const cwd = mkdtempSync(join(dir, 'default-'));
    const ran = await runCli(['run', 'say done', '--json', '--model', `scripted:${script}`], { cwd, env });
    expect(ran.code).toBe(0);
    const runId = (JSON.parse(ran.stdout.split('\n')[0]!) as { runId: string }).runId;
    expect(existsSync(join(cwd, '.sage', 'sage.db'))).toBe(true);
    const listed = await runCli(['runs', 'list', '--json'], { cwd, env });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: runId, status: 'completed', finalText: 'done' })]);
  });

  it('sage run --ephemeral stores nothing', async () => {
    const cwd = mkdtempSync(join(dir, 'ephemeral-'));
    const ran = await runCli(['run', 'say done', '--json', '--ephemeral', '--model', `scripted:${script}`], { cwd, env });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('"run.completed"');
    expect(existsSync(join(cwd, '.sage'))).toBe(false);
  });
});
