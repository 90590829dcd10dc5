/**
 * The built CLI (`dist/cli/bin.js`; `npm run build` first) as a person runs it, for the real-program
 * suites under src: no terminal (stdin closed), JSON lines on stdout parsed into events.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const sageBin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'cli', 'bin.js');

export interface SageResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SageEvent {
  type: string;
  runId: string;
  data: Record<string, unknown>;
}

/** Runs `sage <args>` in `cwd` with `env` over a clean base (no provider keys), killed after `timeoutMs`. */
export function runSage(args: string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number; onStdout?: (all: string) => void }): Promise<SageResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [sageBin, ...args], {
      cwd: options.cwd,
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
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON-lines events of a `--json` run. */
export function eventsOf(stdout: string): SageEvent[] {
  return stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as SageEvent);
}

/** Polls `probe` until it gives a value; the deadline is generous, as the machine may be loaded. */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
