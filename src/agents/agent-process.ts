import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { killWithSage } from '../sandbox/guardian.js';
import { AgentProcessError } from './errors.js';

/** The last this many characters of an agent's stderr are kept, to say why it failed. */
const STDERR_TAIL = 4_000;

/**
 * An agent's process, in its own process group (so a cancel stops everything it started), speaking
 * newline-delimited JSON on stdin and stdout.
 */
export class AgentProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private stderrTail = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(command: readonly string[], options: { cwd: string; env: Record<string, string>; onLine: (line: string) => void }) {
    const [program, ...args] = command;
    if (!program) throw new AgentProcessError('The agent has no command to run.');
    this.child = spawn(program, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    // Its whole tree dies with Sage, kill -9 included (the sandbox's --die-with-parent does it too).
    const release = killWithSage(this.child.pid);
    this.child.once('close', release);
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', (error) => reject(new AgentProcessError(`Could not start the agent (${program}): ${error.message}`, { cause: error })));
      this.child.once('close', (code, signal) => resolve({ code, signal }));
    });
    // Keep the promise from being an unhandled rejection before someone awaits it.
    this.exited.catch(() => {});
    this.child.stdin.on('error', () => {}); // the agent exited: later writes are dropped, the exit says why
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
    });
    createInterface({ input: this.child.stdout, crlfDelay: Infinity }).on('line', options.onLine);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get stderr(): string {
    return this.stderrTail.trim();
  }

  send(message: unknown): void {
    if (this.child.stdin.writable) this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** No more input: a one-shot agent exits once it has answered. */
  endInput(): void {
    if (this.child.stdin.writable) this.child.stdin.end();
  }

  /** Stops the whole process group: SIGTERM, then SIGKILL if it is still there after `graceMs`. */
  async stop(graceMs = 2_000): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return;
    const signal = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pid, sig);
      } catch {
        // already gone
      }
    };
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), graceMs);
    await this.exited.catch(() => undefined);
    clearTimeout(timer);
  }
}
