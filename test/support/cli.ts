import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const root = resolve(import.meta.dirname, '../..');
export const bin = join(root, 'dist/cli/bin.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A fresh, empty working directory for a CLI process a test starts without one. Every run is
 * recorded in `.sage/sage.db` of the working directory, so running in the repository would make
 * parallel test files share one store (and create the repository's own `.sage/`).
 */
export function freshWorkDir(): string {
  return mkdtempSync(join(tmpdir(), 'sage-cli-cwd-'));
}

/** Runs the built CLI without a terminal (stdin is a pipe that is closed at once); in a fresh temp folder unless `cwd` is given. */
export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; onSpawn?: (pid: number) => void; onStdout?: (all: string) => void } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd ?? freshWorkDir(),
      env: { ...process.env, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', ...options.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      options.onStdout?.(stdout);
    });
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    if (child.pid) options.onSpawn?.(child.pid);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

export function writeScript(turns: unknown[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'sage-cli-'));
  const path = join(dir, 'script.json');
  writeFileSync(path, JSON.stringify({ turns }));
  return path;
}
