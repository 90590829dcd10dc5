import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, freshWorkDir } from './cli.js';

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
