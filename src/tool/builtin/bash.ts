import { createRequire } from 'node:module';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, type Tool, type ToolContext, type ToolResult } from '../types.js';
import { CappedOutput } from './support/capped-output.js';
import { describeFsError } from './support/fs-error.js';
import { errorResult, guardedExecute } from './support/guarded-execute.js';
import { killProcessGroup } from './support/process-group.js';
import { killWithSage } from '../../sandbox/guardian.js';

export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Per stream; a model rarely needs more, and every character costs context. */
export const BASH_MAX_OUTPUT_CHARS = 30_000;
/**
 * Per stream, what is kept of the whole output for people (ToolResult.fullContent, stored with the
 * call's event) when the model's copy is cut. Bounded so a command that prints gigabytes cannot
 * fill the store; past it the kept text is cut in the middle too, with the same marker.
 */
export const BASH_MAX_KEPT_CHARS = 5_000_000;

export interface BashToolOptions {
  /** How long a SIGTERM'd group gets before SIGKILL. */
  killGraceMs?: number;
  maxOutputChars?: number;
  /** Per stream, the whole output kept for people when the model's copy is cut. */
  maxKeptChars?: number;
  /**
   * After bash exits, how long to wait for background processes that still hold its stdout or
   * stderr before stopping them (otherwise `server &` would keep the call open until the timeout).
   */
  drainMs?: number;
}

const inputSchema = z.object({
  command: z.string().min(1, 'command must not be empty'),
  timeout: z
    .number()
    .int('timeout is in whole milliseconds')
    .positive('timeout must be a positive number of milliseconds')
    .max(BASH_MAX_TIMEOUT_MS, `timeout may be at most ${BASH_MAX_TIMEOUT_MS} ms (10 minutes)`)
    .optional(),
  description: z.string().optional(),
});

export type BashInput = z.infer<typeof inputSchema>;

/** What ended the command, for front ends (`data` of the result). */
export interface BashOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** Background processes still held the output pipes after bash exited and were stopped. */
  stoppedBackground: boolean;
  stdoutTruncated: number;
  stderrTruncated: number;
  durationMs: number;
}

function runCommand(input: BashInput, ctx: ToolContext, options: Required<BashToolOptions>): Promise<ToolResult> {
  const timeoutMs = input.timeout ?? BASH_DEFAULT_TIMEOUT_MS;
  const started = Date.now();
  const stdout = new CappedOutput(options.maxOutputChars);
  const stderr = new CappedOutput(options.maxOutputChars);
  // The same streams with a far larger cap: the whole output a person can read when the model's is cut.
  const keptStdout = new CappedOutput(Math.max(options.maxKeptChars, options.maxOutputChars));
  const keptStderr = new CappedOutput(Math.max(options.maxKeptChars, options.maxOutputChars));

  return new Promise((resolve) => {
    // detached: the shell leads a new process group, so one kill reaches everything it started.
    // stdin is closed so a command waiting for input ends instead of hanging until the timeout.
    // node:child_process is loaded at the first command, not with this module: every `sage run`
    // loads the built-in tools at its start (to offer them), and most runs never start a process.
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    const child = spawn('bash', ['-c', input.command], {
      cwd: ctx.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    // The command's group dies with this Sage process, kill -9 included: a crashed run's call is
    // reported interrupted, so nothing of it may still be writing afterwards.
    const release = killWithSage(child.pid);
    let timedOut = false;
    let cancelled = false;
    let stoppedBackground = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let killing: Promise<void> | undefined;

    const stop = (): Promise<void> => {
      if (child.pid !== undefined) killing ??= killProcessGroup(child.pid, options.killGraceMs);
      return killing ?? Promise.resolve();
    };
    const onAbort = (): void => {
      cancelled = true;
      void stop();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      void stop();
    }, timeoutMs);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.signal.aborted) onAbort();

    const finish = (result: ToolResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      ctx.signal.removeEventListener('abort', onAbort);
      // When we started a kill, report only once the group is gone (or SIGKILL'd). A command that
      // ended by itself is not killed: `nohup server > log 2>&1 &` is allowed to keep running.
      void (killing ?? Promise.resolve()).then(() => {
        release();
        resolve(result);
      });
    };

    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout.append(chunk);
      keptStdout.append(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr.append(chunk);
      keptStderr.append(chunk);
    });

    child.on('error', (error) => {
      finish(errorResult(`Bash could not start the command: ${describeFsError(error)}`));
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      drainTimer = setTimeout(() => {
        stoppedBackground = true;
        void stop();
      }, options.drainMs);
    });
    child.on('close', (code, signal) => {
      const ended = exit ?? { code, signal };
      const outcome: BashOutcome = {
        exitCode: ended.code,
        signal: ended.signal,
        timedOut,
        cancelled,
        stoppedBackground,
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        durationMs: Date.now() - started,
      };
      const result = formatResult(stdout.toString(), stderr.toString(), outcome, timeoutMs);
      const cut = outcome.stdoutTruncated > 0 || outcome.stderrTruncated > 0;
      finish(cut ? { ...result, fullContent: formatResult(keptStdout.toString(), keptStderr.toString(), outcome, timeoutMs).content } : result);
    });
  });
}

function formatResult(stdout: string, stderr: string, outcome: BashOutcome, timeoutMs: number): ToolResult {
  const parts: string[] = [];
  if (stdout.length > 0) parts.push(stdout.replace(/\n$/, ''));
  if (stderr.length > 0) parts.push(`[stderr]\n${stderr.replace(/\n$/, '')}`);
  if (parts.length === 0) parts.push('(no output)');

  let status: string;
  if (outcome.timedOut) {
    status = `The command timed out after ${timeoutMs} ms; its whole process group was killed. Use a longer timeout (at most ${BASH_MAX_TIMEOUT_MS} ms) or a faster command.`;
  } else if (outcome.cancelled) {
    status = 'The command was cancelled; its whole process group was killed.';
  } else if (outcome.signal !== null) {
    status = `The command was killed by signal ${outcome.signal}.`;
  } else {
    status = `Exit code: ${outcome.exitCode}`;
  }
  if (outcome.stoppedBackground) {
    status += '\nBackground processes that kept the output open after the command finished were stopped; redirect their output to a file (`cmd > log 2>&1 &`) to keep them running.';
  }
  parts.push(status);
  const failed = outcome.timedOut || outcome.cancelled || outcome.signal !== null || outcome.exitCode !== 0;
  return failed ? { content: parts.join('\n'), isError: true, data: outcome } : { content: parts.join('\n'), data: outcome };
}

/**
 * Creates the Bash tool; options exist for tests and embedders (a shorter kill grace period, a
 * different output cap).
 */
export function createBashTool(options: BashToolOptions = {}): Tool<BashInput> {
  const resolved: Required<BashToolOptions> = {
    killGraceMs: options.killGraceMs ?? 2_000,
    maxOutputChars: options.maxOutputChars ?? BASH_MAX_OUTPUT_CHARS,
    maxKeptChars: options.maxKeptChars ?? BASH_MAX_KEPT_CHARS,
    drainMs: options.drainMs ?? 250,
  };
  return defineTool({
    name: 'Bash',
    description: `Run a bash command in the working directory and return its stdout, stderr and exit code. The command runs in its own process group with stdin closed; it is killed (with everything it started) after \`timeout\` ms (default ${BASH_DEFAULT_TIMEOUT_MS}, max ${BASH_MAX_TIMEOUT_MS}) or when the run is cancelled. Output over ${resolved.maxOutputChars} characters per stream keeps its start and end (the person can still see all of it; to search a long output yourself, redirect it to a file and use Grep or Read). Prefer Read, Glob, Grep, Edit and Write for files. Give a short \`description\` of what the command does.`,
    inputSchema,
    // Any command can do anything: the permission gate's shell classifier (src/permission/risk-classifier.ts)
    // parses the command and raises this to HIGH or lowers it to LOW; there is no second list here.
    risk: () => 'MEDIUM',
    readOnly: false,
    permissionResource: (input) => input.command,
    execute: guardedExecute('Bash', inputSchema, async (input, ctx) => {
      // Checked first because spawn reports a missing cwd as "spawn bash ENOENT", which misleads.
      const cwdStat = await stat(ctx.cwd).catch(() => undefined);
      if (!cwdStat?.isDirectory()) {
        return errorResult(`Bash cannot run: the working directory ${ctx.cwd} is not an accessible directory.`);
      }
      return runCommand(input, ctx, resolved);
    }),
  });
}

/** Bash with the default settings. */
export const bashTool = createBashTool();
