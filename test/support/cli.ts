import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
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

/** A CLI session inside tmux: a real pseudo-terminal we can type into and read; in a fresh temp folder unless `cwd` is given. */
export class TmuxSession {
  readonly name = `sage-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private readonly exitFile: string;

  constructor(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'sage-tmux-'));
    this.exitFile = join(dir, 'exit-code');
    const quoted = [process.execPath, bin, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const extra = Object.entries(options.env ?? {}).map(([k, v]) => `${k}='${v}'`).join(' ');
    const command = `cd '${options.cwd ?? freshWorkDir()}' && env ANTHROPIC_API_KEY= OPENAI_API_KEY= CI= ${extra} ${quoted}; echo $? > '${this.exitFile}'; sleep 30`;
    execFileSync('tmux', ['new-session', '-d', '-s', this.name, '-x', '160', '-y', '50', command]);
  }

  screen(): string {
    return execFileSync('tmux', ['capture-pane', '-p', '-J', '-S', '-2000', '-t', this.name], { encoding: 'utf8' });
  }

  keys(...keys: string[]): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, ...keys]);
  }

  type(text: string): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, '-l', text]);
  }

  async waitFor(pattern: RegExp | string, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (typeof pattern === 'string' ? screen.includes(pattern) : pattern.test(screen)) {
        // A prompt is drawn a moment before it listens for keys; let it settle before the test types.
        await new Promise((r) => setTimeout(r, 200));
        return screen;
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${pattern}. Screen:\n${screen}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits for the `count`-th prompt introduced by `header` to be drawn with `ready` selected. */
  async waitForPrompt(header: string, count: number, ready = '❯ Allow once', timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      const parts = screen.split(header);
      if (parts.length - 1 >= count && parts.at(-1)!.includes(ready)) {
        await new Promise((r) => setTimeout(r, 200));
        return screen;
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for prompt ${count} of "${header}". Screen:\n${screen}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Moves the select prompt's cursor down to the option starting with `label` and picks it. */
  async choose(label: string): Promise<void> {
    await this.waitFor(label);
    for (let i = 0; i < 10 && !this.screen().includes(`❯ ${label}`); i++) {
      this.keys('Down');
      await new Promise((r) => setTimeout(r, 100));
    }
    await this.waitFor(`❯ ${label}`);
    this.keys('Enter');
  }

  /** Waits until a pattern has appeared `count` times on the screen. */
  async waitForCount(pattern: string, count: number, timeoutMs = 15_000): Promise<string> {
    return this.waitFor(new RegExp(`(${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\\s\\S]*){${count}}`), timeoutMs);
  }

  async exitCode(timeoutMs = 15_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (!existsSync(this.exitFile) || readFileSync(this.exitFile, 'utf8').trim() === '') {
      if (Date.now() > deadline) throw new Error(`The command did not exit. Screen:\n${this.screen()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return Number(readFileSync(this.exitFile, 'utf8').trim());
  }

  kill(): void {
    try {
      execFileSync('tmux', ['kill-session', '-t', this.name], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
}
