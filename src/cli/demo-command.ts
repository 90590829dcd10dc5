import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { styleText } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadScriptedModel } from '../model/scripted-model.js';
import { executeDurableRun } from './execute-durable-run.js';
import { reportError } from './report-error.js';
import { checkTrajectoryPath } from './output-path.js';
import { parseRunFlags, type RunFlags } from './run-flags.js';
import { checkBeforeStart } from '../runtime/admission-checks.js';

/** The demo's files ship with the package, beside dist/. */
const demoDir = fileURLToPath(new URL('../../demo/', import.meta.url));

export const DEMO_TASK = 'The tests of this project fail. Find the bug, fix it with my approval, and check the fix.';

/**
 * `sage demo`: a scripted agent fixes a bug in a scratch copy of a sample project. It shows a
 * command approval, a question, an edit approval and a summary, with no API key and no network.
 */
export async function demoCommand(raw: Record<string, unknown>): Promise<number> {
  let flags: RunFlags | undefined;
  let scratch: string | undefined;
  try {
    flags = parseRunFlags({ ...raw, keep: undefined });
    if (flags.trajectory) checkTrajectoryPath(flags.trajectory);
    scratch = mkdtempSync(join(tmpdir(), 'sage-demo-'));
    cpSync(join(demoDir, 'sample-project'), scratch, { recursive: true });
    // The demo reads the user's settings too (its rules and hooks apply): broken ones stop it.
    const { cliRules } = await import('./cli-run-spec.js');
    await checkBeforeStart({ surface: 'terminal', cwd: scratch, rules: cliRules(flags), ignoreBrokenSettings: flags.ignoreBrokenSettings });
    const model = loadScriptedModel(join(demoDir, 'script.json'), { chunkDelayMs: flags.json || !process.stdout.isTTY ? 0 : 12 });
    if (!flags.json) {
      process.stdout.write(`${styleText('bold', 'Sage demo')} ${styleText('dim', `— a scripted agent works in ${scratch}`)}\n`);
      process.stdout.write(`${styleText('dim', 'Task:')} ${DEMO_TASK}\n\n`);
    }
    // Built like every run (one factory: gate, prompt, audit), over an in-memory store: the demo
    // leaves nothing behind in the folder it was started from.
    const scriptSpec = `scripted:${join(demoDir, 'script.json')}`;
    const { code } = await executeDurableRun({ task: DEMO_TASK, flags, modelSpec: scriptSpec, model, cwd: scratch, ephemeral: true });
    if (raw.keep && !flags.json) process.stdout.write(styleText('dim', `The project is kept in ${scratch}\n`));
    return code;
  } catch (error) {
    return reportError(error, flags?.verbose ?? raw.verbose === true);
  } finally {
    if (scratch && !raw.keep) rmSync(scratch, { recursive: true, force: true });
  }
}
