import { spawn } from 'node:child_process';
import type { RunWorker, WorkerContext } from '../loop/worker.js';
import { SageError } from '../errors/index.js';

/** The output of a chain step kept in its event (the end of it: that is where a failure says why). */
const OUTPUT_CAP = 64 * 1024;

export interface ChainSpec {
  setup?: string;
  cleanup?: string;
}

/** A setup script failed: the chain stops there: a failed or killed action always ends it. */
export class ChainStepFailedError extends SageError {
  constructor(step: 'setup' | 'cleanup', command: string, exitCode: number | null, output: string) {
    const tail = output.trim().split('\n').slice(-5).join('\n');
    super(`${step}_failed`, `The ${step} script failed (${exitCode === null ? 'killed' : `exit code ${exitCode}`}): ${command}${tail ? `\n${tail}` : ''}`);
  }
}

/** One action of the chain: a script or the coding agent, and what comes next. */
export type ChainAction = { type: 'setup' | 'cleanup'; command: string; next?: ChainAction } | { type: 'agent'; next?: ChainAction };

/** The chain as actions: setup → agent → cleanup, each only when given. */
export function chainActions(spec: ChainSpec): ChainAction {
  const cleanup: ChainAction | undefined = spec.cleanup ? { type: 'cleanup', command: spec.cleanup } : undefined;
  const agent: ChainAction = { type: 'agent', ...(cleanup ? { next: cleanup } : {}) };
  return spec.setup ? { type: 'setup', command: spec.setup, next: agent } : agent;
}

/**
 * Whether the chain ends after `action` (for the actions Sage has: no dev
 * server, no parallel setup): a failed or killed action always ends it; otherwise it ends when there
 * is no next action.
 */
export function shouldFinalize(action: ChainAction, outcome: 'succeeded' | 'failed' | 'killed'): boolean {
  if (outcome !== 'succeeded') return true;
  return action.next === undefined;
}

/**
 * The action chain around a run's work (Sage's own loop, or an external agent's worker): the setup
 * script, then the work, then the cleanup script. Each script's output, exit code and duration is a
 * `chain.step` event (the person sees the cleanup's output like everything else); a step that
 * finished is remembered with the run, so a resumed run does not repeat it. The scripts are the
 * person's own commands (flags, or the settings of a trusted folder), like hooks: they run outside
 * the gate, with Sage's environment, in the run's folder.
 */
export function chainWorker(spec: ChainSpec, inner?: RunWorker): RunWorker {
  return async (ctx) => {
    let action: ChainAction | undefined = chainActions(spec);
    let finalText = '';
    while (action) {
      if (action.type === 'agent') {
        // A failed or stopped agent throws: that ends the chain (the cleanup does not run) and the run.
        finalText = inner ? (await inner(ctx)).finalText : await ctx.runLoop();
        if (shouldFinalize(action, 'succeeded')) break;
        action = action.next;
        continue;
      }
      if (!ctx.chainDone.includes(action.type)) {
        const step = await runScript(ctx, action.type, action.command);
        const outcome = step.exitCode === 0 ? 'succeeded' : step.exitCode === null ? 'killed' : 'failed';
        const finalize = shouldFinalize(action, outcome);
        ctx.emit('chain.step', { step: action.type, command: action.command, exitCode: step.exitCode, durationMs: step.durationMs, output: step.output, finalize });
        if (outcome !== 'succeeded') throw new ChainStepFailedError(action.type, action.command, step.exitCode, step.output);
        await ctx.markChainDone(action.type);
        if (finalize) break;
      }
      action = action.next;
    }
    return { finalText };
  };
}

async function runScript(ctx: WorkerContext, step: string, command: string): Promise<{ exitCode: number | null; durationMs: number; output: string }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd: ctx.cwd, env: process.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_CAP);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    };
    ctx.signal.addEventListener('abort', kill, { once: true });
    child.once('error', (error) => {
      ctx.signal.removeEventListener('abort', kill);
      resolve({ exitCode: 127, durationMs: Date.now() - started, output: `${step}: ${error.message}` });
    });
    child.once('close', (code) => {
      ctx.signal.removeEventListener('abort', kill);
      resolve({ exitCode: code, durationMs: Date.now() - started, output });
    });
  });
}
