import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashTool, createBashTool, type BashOutcome } from './bash.js';
import { createTestContext } from './test-support/context.js';
import { useTempDirs } from './test-support/temp-dir.js';

const tempDir = useTempDirs();

/**
 * Gone means kill(pid, 0) gives ESRCH, or the process is a zombie: it has exited and waits for
 * PID 1 to reap it, which some container inits do only every couple of seconds.
 */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return process.platform !== 'linux';
  }
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

async function waitGone(pid: number, withinMs = 1_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!pidAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return !pidAlive(pid);
}

async function readPid(file: string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (/^\d+\n/.test(text)) return Number(text.trim());
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no pid written to ${file}`);
}

describe('Bash', () => {
  it('runs in the working directory and reports stdout, stderr and the exit code', async () => {
    const cwd = await tempDir();
    const result = await bashTool.execute({ command: 'pwd; echo oops >&2; exit 3' }, createTestContext({ cwd }));
    expect(typeof result).toBe('object');
    if (typeof result === 'string') return;
    expect(result.content).toContain(cwd);
    expect(result.content).toContain('[stderr]\noops');
    expect(result.content).toContain('Exit code: 3');
    expect(result.isError).toBe(true);
    expect((result.data as BashOutcome).exitCode).toBe(3);
  });

  it('succeeds without isError when the exit code is 0', async () => {
    const result = await bashTool.execute({ command: 'echo hello' }, createTestContext({ cwd: await tempDir() }));
    expect(result).toMatchObject({ content: 'hello\nExit code: 0' });
    expect(typeof result === 'object' && result.isError).toBeFalsy();
  });

  it('closes stdin so a command reading input ends by itself', async () => {
    // read sees end of input at once (status 1) instead of waiting for a line that never comes;
    // with stdin left open the call would end only by its timeout.
    const result = await bashTool.execute(
      { command: 'if read -r line; then echo "got $line"; else echo "end of input"; fi; cat; echo done', timeout: 60_000 },
      createTestContext({ cwd: await tempDir() }),
    );
    expect(result).toMatchObject({ content: 'end of input\ndone\nExit code: 0', data: { timedOut: false, exitCode: 0 } });
  });

  it('keeps the head and tail of long output with a truncation marker', async () => {
    const tool = createBashTool({ maxOutputChars: 1_000 });
    const result = await tool.execute(
      { command: 'echo START; head -c 50000 /dev/zero | tr "\\0" x; echo; echo END' },
      createTestContext({ cwd: await tempDir() }),
    );
    if (typeof result === 'string') throw new Error('expected an object');
    expect(result.content.startsWith('START')).toBe(true);
    expect(result.content).toMatch(/\[\.\.\. \d+ characters truncated \.\.\.\]/);
    expect(result.content).toContain('END\nExit code: 0');
    expect(result.content.length).toBeLessThan(1_200);
    expect((result.data as BashOutcome).stdoutTruncated).toBeGreaterThan(49_000);
  });

  it('keeps the whole output for people when the model\'s copy is cut', async () => {
    const result = await bashTool.execute({ command: 'seq 1 20000; seq 1 3 >&2' }, createTestContext({ cwd: await tempDir() }));
    if (typeof result === 'string') throw new Error('expected an object');
    const all = Array.from({ length: 20000 }, (_, i) => String(i + 1)).join('\n');
    expect(all.length).toBeGreaterThan(30_000);
    // The model's copy: cut in the middle, saying how much.
    expect(result.content).toMatch(new RegExp(`\\[\\.\\.\\. ${all.length + 1 - 30_000} characters truncated \\.\\.\\.\\]`));
    expect(result.content).not.toContain('\n10000\n');
    // The whole: every line of stdout, then stderr and the status, in the same layout.
    expect(result.fullContent).toBe(`${all}\n[stderr]\n1\n2\n3\nExit code: 0`);
  });

  it('keeps no second copy when nothing was cut, and bounds the kept copy too', async () => {
    const cwd = await tempDir();
    const short = await bashTool.execute({ command: 'echo short' }, createTestContext({ cwd }));
    expect(typeof short === 'object' && 'fullContent' in short).toBe(false);
    const tool = createBashTool({ maxOutputChars: 100, maxKeptChars: 10_000 });
    const huge = await tool.execute({ command: 'head -c 50000 /dev/zero | tr "\\0" y' }, createTestContext({ cwd }));
    if (typeof huge === 'string') throw new Error('expected an object');
    expect(huge.fullContent).toMatch(/\[\.\.\. 40000 characters truncated \.\.\.\]/);
    expect(huge.fullContent!.length).toBeLessThan(10_100);
  });

  it('kills the whole process group when the timeout passes', async () => {
    const cwd = await tempDir();
    const pidFile = path.join(cwd, 'pid');
    const marker = path.join(cwd, 'finished');
    // The background job would leave a marker if it lived to the end of its sleep.
    const result = await bashTool.execute(
      { command: `(sleep 30; touch ${marker}) & echo $! > ${pidFile}; wait`, timeout: 300 },
      createTestContext({ cwd }),
    );
    expect(result).toMatchObject({ isError: true, data: { timedOut: true } });
    expect(typeof result === 'object' && result.content).toContain('timed out after 300 ms');
    expect(await waitGone(await readPid(pidFile))).toBe(true);
    // Gone before its sleep ended, so the marker can never appear.
    expect(existsSync(marker)).toBe(false);
  });

  it('kills the whole process group when the run is cancelled', async () => {
    const cwd = await tempDir();
    const pidFile = path.join(cwd, 'pid');
    const controller = new AbortController();
    const pending = bashTool.execute(
      { command: `sleep 30 & echo $! > ${pidFile}; wait` },
      createTestContext({ cwd, signal: controller.signal }),
    );
    const pid = await readPid(pidFile);
    expect(pidAlive(pid)).toBe(true);
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ isError: true, data: { cancelled: true } });
    expect(await waitGone(pid)).toBe(true);
  });

  it('escalates to SIGKILL for processes that ignore SIGTERM', async () => {
    const cwd = await tempDir();
    const pidFile = path.join(cwd, 'pid');
    const tool = createBashTool({ killGraceMs: 200 });
    const result = await tool.execute(
      { command: `trap '' TERM; sleep 30 & echo $! > ${pidFile}; wait`, timeout: 200 },
      createTestContext({ cwd }),
    );
    expect(result).toMatchObject({ isError: true, data: { timedOut: true } });
    expect(await waitGone(await readPid(pidFile))).toBe(true);
  });

  it('does not wait for background processes that keep the output open', async () => {
    const cwd = await tempDir();
    const pidFile = path.join(cwd, 'pid');
    const marker = path.join(cwd, 'finished');
    const result = await bashTool.execute({ command: `(sleep 30; touch ${marker}) & echo $! > ${pidFile}; echo started` }, createTestContext({ cwd }));
    // The call came back with the job still holding the pipes: it was stopped, not waited for.
    expect(result).toMatchObject({ content: expect.stringContaining('started'), data: { stoppedBackground: true, exitCode: 0, timedOut: false } });
    expect(await waitGone(await readPid(pidFile))).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a timeout above ten minutes with a clear error', async () => {
    const result = await bashTool.execute({ command: 'echo hi', timeout: 600_001 }, createTestContext({ cwd: await tempDir() }));
    expect(result).toEqual({ content: expect.stringContaining('timeout may be at most 600000 ms'), isError: true });
  });

  it('gives an error result for malformed input instead of throwing', async () => {
    const ctx = createTestContext({ cwd: await tempDir() });
    await expect(bashTool.execute({ command: 42 } as never, ctx)).resolves.toMatchObject({ isError: true, content: expect.stringContaining('command') });
    await expect(bashTool.execute(undefined as never, ctx)).resolves.toMatchObject({ isError: true });
  });

  it('reports a missing working directory clearly', async () => {
    const cwd = path.join(await tempDir(), 'gone');
    const result = await bashTool.execute({ command: 'echo hi' }, createTestContext({ cwd }));
    expect(result).toEqual({ content: expect.stringContaining(`working directory ${cwd}`), isError: true });
  });

  it('uses the command as its permission resource', () => {
    expect(bashTool.permissionResource?.({ command: 'npm test' }, { cwd: '/' })).toBe('npm test');
    expect(bashTool.readOnly).toBe(false);
  });
});
