import { spawn, type ChildProcess } from 'node:child_process';
import { killWithSage } from '../../sandbox/guardian.js';

/** Output kept per terminal when the agent names no limit. */
const DEFAULT_OUTPUT_LIMIT = 1024 * 1024;

interface Terminal {
  child: ChildProcess;
  output: string;
  truncated: boolean;
  limit: number;
  exit?: { exitCode: number | null; signal: string | null };
  exited: Promise<{ exitCode: number | null; signal: string | null }>;
}

/**
 * The terminals Sage runs for an ACP agent (`terminal/*`): each command in its own process group,
 * its output kept up to the agent's byte limit (the start is dropped, as ACP says), killed with the
 * session. Only commands the gate allowed reach here.
 */
export class Terminals {
  private readonly terminals = new Map<string, Terminal>();
  private next = 0;

  create(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; outputByteLimit?: number | null }): string {
    const id = `term_${++this.next}`;
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.once('close', killWithSage(child.pid));
    const terminal: Terminal = {
      child,
      output: '',
      truncated: false,
      limit: options.outputByteLimit ?? DEFAULT_OUTPUT_LIMIT,
      exited: new Promise((resolve) => {
        child.once('error', (error) => {
          terminal.output += `${error.message}\n`;
          resolve((terminal.exit = { exitCode: 127, signal: null }));
        });
        child.once('close', (code, signal) => resolve((terminal.exit = { exitCode: code, signal })));
      }),
    };
    const keep = (chunk: Buffer) => {
      terminal.output += chunk.toString('utf8');
      if (Buffer.byteLength(terminal.output) > terminal.limit) {
        terminal.output = terminal.output.slice(-terminal.limit);
        terminal.truncated = true;
      }
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.terminals.set(id, terminal);
    return id;
  }

  private get(id: string): Terminal {
    const terminal = this.terminals.get(id);
    if (!terminal) throw new Error(`There is no terminal ${id}.`);
    return terminal;
  }

  output(id: string): { output: string; truncated: boolean; exitStatus?: { exitCode: number | null; signal: string | null } } {
    const t = this.get(id);
    return { output: t.output, truncated: t.truncated, ...(t.exit ? { exitStatus: t.exit } : {}) };
  }

  waitForExit(id: string): Promise<{ exitCode: number | null; signal: string | null }> {
    return this.get(id).exited;
  }

  /** How the command ended and what it printed (kept even when the agent releases the terminal first). */
  async ended(id: string): Promise<{ exit: { exitCode: number | null; signal: string | null }; output: string }> {
    const t = this.get(id);
    const exit = await t.exited;
    return { exit, output: t.output };
  }

  kill(id: string): void {
    const t = this.get(id);
    if (t.exit || t.child.pid === undefined) return;
    try {
      process.kill(-t.child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }

  release(id: string): void {
    if (!this.terminals.has(id)) return;
    this.kill(id);
    this.terminals.delete(id);
  }

  /** The session ended: every command still running is stopped. */
  releaseAll(): void {
    for (const id of [...this.terminals.keys()]) this.release(id);
  }
}
