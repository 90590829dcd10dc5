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
import { cliRules } from './cli-run-spec.js';

/** The demo's files ship with the package, beside dist/. */
const demoDir = fileURLToPath(new URL('../../demo/', import.meta.url));

export const DEMO_TASK = 'The tests of this project fail. Find the bug, fix it with my approval, and check the fix.';

/** Who said yes to what ran, truthfully: the script's agent cannot know how its asks were answered. */
function whoApproved(flags: RunFlags): string {
  if (flags.nonInteractive && flags.auto === 'allow') {
    return 'Every ask was approved automatically (--auto allow): no person was asked.';
  }
  if (flags.nonInteractive) {
    return `No person was asked: every ask was ${flags.auto === 'deny' ? 'denied' : 'answered'} automatically.`;
  }
  if (flags.batch) return 'No person was asked (--batch): every ask was denied.';
  return 'Every call that no rule allowed and that was not read-only waited for your answer.';
}

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
    if (!flags.json) {
      const where = raw.keep ? `The project is kept in ${scratch}` : `Removed the scratch copy ${scratch} (--keep keeps it).`;
      process.stdout.write(styleText('dim', `${whoApproved(flags)}\n${where}\n`));
    }
    return code;
  } catch (error) {
    return reportError(error, flags?.verbose ?? raw.verbose === true);
  } finally {
    if (scratch && !raw.keep) rmSync(scratch, { recursive: true, force: true });
  }
}
