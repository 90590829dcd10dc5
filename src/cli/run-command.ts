import { resolve } from 'node:path';
import { statSync } from 'node:fs';
import { chooseModel, chooseModelSpec } from './choose-model.js';
import { settingsModel } from './settings-model.js';
import { EXIT } from './exit-codes.js';
import { reportError } from './report-error.js';
import { parseRunFlags, type RunFlags } from './run-flags.js';
import { checkDbPath, checkTrajectoryPath } from './output-path.js';
import { checkBeforeStart } from '../runtime/admission-checks.js';
import { UsageError } from './usage-error.js';
import { agentRunParts } from './agent-run.js';
import { detachCommand } from './detach-command.js';
import { executeDurableRun } from './execute-durable-run.js';

/** `sage run "<task>"`. */
export async function runCommand(task: string, raw: Record<string, unknown>): Promise<number> {
  let flags: RunFlags | undefined;
  try {
    flags = parseRunFlags(raw);
    if (task.trim() === '') throw new UsageError('The task is empty; say what the agent should do: sage run "<task>".');
    const requestedCwd = resolveCwd(flags.cwd);
    // An external agent, a follow-up of one, the action chain: resolved before anything is stored.
    const parts = await agentRunParts(flags, requestedCwd);
    const cwd = parts.cwd ?? requestedCwd;
    if (flags.trajectory && !flags.detach) checkTrajectoryPath(flags.trajectory);
    // Before anything runs, or is stored to run later: broken settings stop here (fail closed), as
    // does an agent that cannot have its sandbox.
    const { cliRules } = await import('./cli-run-spec.js');
    const surface = flags.detach ? 'detached' : 'terminal';
    await checkBeforeStart({ surface, cwd, rules: cliRules(flags), ignoreBrokenSettings: flags.ignoreBrokenSettings, ...(parts.agent ? { agent: parts.agent } : {}) });
    if (flags.detach) {
      return await detachCommand(task, flags, cwd, parts);
    }
    if (flags.db) checkDbPath(flags.db);
    const modelSpec = parts.modelSpec ?? chooseModelSpec(flags.model, flags.model ? undefined : await settingsModel(cwd));
    // Resolved now so a bad spec or a missing key is said before anything is stored.
    const model = parts.agent ? (await import('../agents/workers.js')).agentModel(parts.agent.name) : await chooseModel(modelSpec, { baseUrl: flags.baseUrl });
    // One way in: --ephemeral is the same factory and runner over an in-memory store.
    const { code, outcome } = await executeDurableRun({ task, flags, modelSpec, model, cwd, ephemeral: flags.ephemeral, agentParts: parts });
    if (flags.json && outcome.status === 'failed' && outcome.error) process.stderr.write(`error: ${outcome.error.message}\n`);
    return code;
  } catch (error) {
    return reportError(error, flags?.verbose ?? raw.verbose === true);
  }
}

export function resolveCwd(dir: string | undefined): string {
  const cwd = resolve(dir ?? process.cwd());
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new UsageError(`--cwd ${cwd} is not a directory.`);
  return cwd;
}

export { EXIT };
