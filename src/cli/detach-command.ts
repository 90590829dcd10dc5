import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXIT } from './exit-codes.js';
import { reportUntrustedFolder } from './folder-trust.js';
import { checkDbPath } from './output-path.js';
import type { RunFlags } from './run-flags.js';
import type { AgentRunParts } from './agent-run.js';
import { UsageError } from './usage-error.js';
import { DurableRunner } from '../durable/durable-runner.js';
import { parseModelSpec } from '../model/resolve-model.js';
import { cliRuntime } from '../runtime/cli-runtime.js';
import { openStore } from '../store/open-store.js';
import { cliRunSpec } from './cli-run-spec.js';
import { chooseModelSpec } from './choose-model.js';
import { settingsModel } from './settings-model.js';

/**
 * `sage run --detach`: starts the run durably and returns at once.
 *
 * The settings were checked by the caller (runCommand) before this: a broken file refuses the run
 * before it is enqueued. The run is created in the store (queued: `running`, no owner), its id is printed, and a detached
 * `sage runs resume ID` child process (stdio ignored, its own process group) drives it to its first
 * suspension or its end; the child then exits and the run waits in the store. A person answers
 * with `sage respond INTERACTION_ID …` from any process, which resumes it there. An external
 * agent's run is never suspended: the child holds the agent while it waits and takes the answer
 * stored by that other process from the store (src/durable, answer-routing.ts). If the child dies
 * before it claims the run, the run stays queued and `sage runs recover` (or `sage serve`) picks it
 * up. This keeps the command instant (no model call before it returns) while the run still
 * progresses without anyone watching.
 */
export async function detachCommand(task: string, flags: RunFlags, cwd: string, parts: AgentRunParts = {}): Promise<number> {
  // As a run in the foreground: --model, else the `model` setting, else the model of the key that is set.
  const spec = parts.modelSpec ?? chooseModelSpec(flags.model, flags.model ? undefined : await settingsModel(cwd));
  if (flags.trajectory) throw new UsageError('--trajectory does not apply to --detach: the events are in the store (sage runs show ID --json).');
  if (!parts.agent) parseModelSpec(spec);
  if (flags.db) checkDbPath(flags.db);
  // The run goes on in the background with nobody to ask: say here what its folder's files miss.
  reportUntrustedFolder(cwd);
  const store = await openStore({ ...(flags.db ? { db: flags.db } : {}), cwd: process.cwd() });
  let runId: string;
  try {
    const runtime = cliRuntime(store);
    const runner = new DurableRunner({ store, runtime });
    const model = spec.startsWith('scripted:') ? `scripted:${resolve(spec.slice('scripted:'.length))}` : spec;
    const record = await runner.enqueue(task, await runtime.admitRun({ task, surface: 'detached', model, oneTask: true, ...cliRunSpec(flags, cwd), ...(parts.agent ? { agent: parts.agent } : {}), ...(parts.chain ? { chain: parts.chain } : {}) }));
    runId = record.id;
  } finally {
    await store.close();
  }

  // '../cli/' rather than './': this module also runs from the bundle in dist/cli-bundle/.
  const bin = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
  // The child rebuilds the gate from the same settings: the person's --ignore-broken-settings goes with it.
  const args = [bin, 'runs', 'resume', runId, ...(flags.db ? ['--db', resolve(flags.db)] : []), ...(flags.ignoreBrokenSettings ? ['--ignore-broken-settings'] : [])];
  const child = spawn(process.execPath, args, { cwd: process.cwd(), env: process.env, detached: true, stdio: 'ignore' });
  child.on('error', () => {
    // The run stays queued; `sage runs recover` drives it.
  });
  child.unref();

  if (flags.json) process.stdout.write(`${JSON.stringify({ runId })}\n`);
  else process.stdout.write(`${runId}\n`);
  return EXIT.ok;
}
