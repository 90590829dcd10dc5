import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { bin } from '../support/cli.js';

// `sage serve` starts its server in a child Node process (src/cli/serve-process.ts): the built CLI, as a person runs it.

/** The built CLI's `sage serve` on a free port in a fresh folder, and the line saying where it serves. */
function startServe(args: string[] = []): { child: ChildProcess; ready: Promise<string>; exit: Promise<number | null>; output: () => string } {
  const dir = mkdtempSync(join(tmpdir(), 'sage-serve-process-'));
  dirs.push(dir);
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--log-level', 'info', ...args], { cwd: dir, env: { ...process.env, SAGE_HOME: dir, SAGE_MANAGED_SETTINGS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const url = /Sage is serving (\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', () => reject(new Error(`sage serve exited before serving:\n${out}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, ready, exit, output: () => out };
}

/** The processes a process started (Linux: /proc). */
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

const gone = (pid: number) => !existsSync(`/proc/${pid}`) || /State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('sage serve in a child process', () => {
  test('the server runs in a child Node given the young generation; SIGTERM to sage stops it gracefully and sage exits 0', async () => {
    const serve = startServe(['--young-generation', '4']);
    const url = await serve.ready;
    const [server] = childrenOf(serve.child.pid!);
    expect(server).toBeDefined();
    expect(readFileSync(`/proc/${server}/cmdline`, 'utf8').split('\0')).toContain('--max-semi-space-size=4');
    expect((await fetch(`${url}/healthz`)).ok).toBe(true);
    serve.child.kill('SIGTERM');
    expect(await serve.exit).toBe(0);
    expect(serve.output()).toContain('"signal":"SIGTERM"');
    expect(serve.output()).toContain('sage server stopped');
    await until(() => gone(server!));
  }, 30_000);

  test('killed with no chance to pass a signal on, sage takes its server down with it', async () => {
    const serve = startServe();
    const url = await serve.ready;
    const [server] = childrenOf(serve.child.pid!);
    serve.child.kill('SIGKILL');
    await until(() => gone(server!));
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 30_000);

  test('--young-generation 0: the server runs in the sage process itself', async () => {
    const serve = startServe(['--young-generation', '0']);
    const url = await serve.ready;
    expect(childrenOf(serve.child.pid!)).toEqual([]);
    expect((await fetch(`${url}/healthz`)).ok).toBe(true);
  }, 30_000);
});
