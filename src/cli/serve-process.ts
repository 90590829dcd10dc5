import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { SERVE_PARENT_ENV, SERVER_SEMI_SPACE_MB, youngGenerationMb } from '../server/heap-growth.js';

/**
 * `sage serve` runs the server in a child Node process started with V8's `--max-semi-space-size`
 * (`--young-generation`, default SERVER_SEMI_SPACE_MB in src/server/heap-growth.ts): V8 reads it
 * only when it sets up the heap, before any of Sage's code runs, and the young generation is memory
 * the server holds whatever it does. This process only starts that child, passes it the signals a
 * supervisor sends, and exits as it exits.
 *
 * No child when there is nothing to set or it would get in the way: `--young-generation 0` (V8
 * decides), `--help`, Windows, a Node started with flags of its own (`node --inspect …`, `--cpu-prof`: they
 * are for the server, so it runs in this process), or NODE_OPTIONS that set the young generation or
 * the inspector.
 */
export function serveChildFlags(args: readonly string[], env: NodeJS.ProcessEnv, execArgv: readonly string[], defaultMb = SERVER_SEMI_SPACE_MB): string[] | undefined {
  // Windows: a detached child gets a console window of its own; the server runs in this process.
  if (process.platform === 'win32' || args[0] !== 'serve' || args.includes('--help') || args.includes('-h')) return undefined;
  if (env[SERVE_PARENT_ENV] || execArgv.length > 0 || /--(max-semi-space-size|inspect)/.test(env['NODE_OPTIONS'] ?? '')) return undefined;
  const given = youngGeneration(args.slice(1));
  const mb = given === undefined ? defaultMb : youngGenerationMb(given);
  // 0, or not a value the flag takes: the serve command itself, in this process (which says what is wrong).
  if (mb === undefined || mb === 0) return undefined;
  return [`--max-semi-space-size=${mb}`];
}

/** The text of `--young-generation` in serve's arguments (the last one given), or undefined. */
function youngGeneration(args: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (arg === '--young-generation') value = args[++i];
    else if (arg.startsWith('--young-generation=')) value = arg.slice('--young-generation='.length);
  }
  return value;
}

/**
 * Runs `sage serve` in a child Node with `nodeFlags` and resolves to the exit code this process
 * should end with. The child has its own process group, so a Ctrl-C at the terminal reaches it
 * once, through this process, rather than twice (the server stops gracefully on the first SIGINT
 * and exits on a second). It also watches this process over an IPC channel and stops when it dies
 * (`kill -9` of this process), instead of running on orphaned.
 */
export function runServeInChild(script: string, args: readonly string[], nodeFlags: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [...nodeFlags, script, ...args], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], detached: true, env: { ...process.env, [SERVE_PARENT_ENV]: String(process.pid) } });
  const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of forwarded) process.on(signal, forward);
  return new Promise((resolve) => {
    child.once('error', (error) => {
      process.stderr.write(`sage serve: could not start the server process: ${error.message}\n`);
      resolve(1);
    });
    child.once('exit', (code, signal) => {
      for (const s of forwarded) process.off(s, forward);
      // Killed by a signal: 128 + its number, as a shell reports it.
      resolve(code ?? 128 + (signal ? signalNumber(signal) : 0));
    });
  });
}

function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}
