// `--db` to a path that cannot be written is the flag's mistake on every command that opens the
// store: one line naming the path, exit 2, nothing run. Build first (npm run build).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
