import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processGroupAlive } from './support/process-group.js';
import { useTempDirs } from './test-support/temp-dir.js';

const tempDir = useTempDirs();
const child = fileURLToPath(new URL('./test-support/bash-in-a-child.ts', import.meta.url));
const tsx = import.meta.resolve('tsx');

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a Bash call dies with the Sage process that started it', () => {
  it('kill -9 of Sage during `sleep 3 && echo b >> f`: the command group is killed, f never gets b', { timeout: 20_000 }, async () => {
    const cwd = await tempDir();
    const file = path.join(cwd, 'f');
    const pidFile = path.join(cwd, 'pgid');
    // The shell writes its own pid (its group's id: the tool starts it as a group leader) first.
    const sage = spawn(process.execPath, ['--import', tsx, child, `echo $$ > pgid; sleep 3 && echo b >> f`, cwd], { stdio: ['ignore', 'pipe', 'inherit'] });
    await waitFor('the child to start the call', () => new Promise<true | undefined>((resolve) => sage.stdout.once('data', () => resolve(true))), 10_000);
    const pgid = await waitFor('the command to write its group id', async () => {
      const text = await readFile(pidFile, 'utf8').catch(() => '');
      return /^\d+\n$/.test(text) ? Number(text) : undefined;
    }, 10_000);
    expect(processGroupAlive(pgid)).toBe(true);

    sage.kill('SIGKILL');
    await new Promise((resolve) => sage.once('exit', resolve));
    // Gone before it could write: either the guardian killed it, or it ran to its end and wrote b.
    await waitFor('the command group to end', () => (processGroupAlive(pgid) ? undefined : true), 10_000);
    expect(await readFile(file, 'utf8').catch(() => '')).toBe('');
  });
});
