import { input } from '@inquirer/prompts';
import { styleText } from 'node:util';
import { chooseModel, chooseModelSpec } from './choose-model.js';
import { settingsModel } from './settings-model.js';
import { offerFolderTrust } from './folder-trust.js';
import { EXIT } from './exit-codes.js';
import { reportError } from './report-error.js';
import { resolveCwd } from './run-command.js';
import { parseRunFlags, type RunFlags } from './run-flags.js';
import { checkDbPath, checkTrajectoryPath } from './output-path.js';
import { checkBeforeStart } from '../runtime/admission-checks.js';
import { UsageError } from './usage-error.js';
import { executeDurableRun } from './execute-durable-run.js';
import { invocableSkills, skillCommand } from './skill-commands.js';
import { cliRules } from './cli-run-spec.js';

const HELP = `Commands:
  /help   show this help
  /exit   end the session (Ctrl+C twice does too)
Anything else is your next message to the agent.
`;

/**
 * `sage` with no task: an interactive session. The conversation continues across messages; each
 * reply is followed by a prompt for the next one.
 */
export async function sessionCommand(raw: Record<string, unknown>): Promise<number> {
  let flags: RunFlags | undefined;
  try {
    flags = parseRunFlags(raw);
    if (!process.stdin.isTTY) throw new UsageError('`sage` without a task starts an interactive session and needs a terminal; use sage run "<task>" (with --non-interactive or --batch when no one can answer).');
    if (flags.batch || flags.nonInteractive) throw new UsageError('An interactive session has a person in it; use sage run "<task>" with --batch or --non-interactive.');
    const cwd = resolveCwd(flags.cwd);
    if (flags.trajectory) checkTrajectoryPath(flags.trajectory);
    await checkBeforeStart({ surface: 'terminal', cwd, rules: cliRules(flags), ignoreBrokenSettings: flags.ignoreBrokenSettings });
    if (flags.db) checkDbPath(flags.db);
    const modelSpec = chooseModelSpec(flags.model, flags.model ? undefined : await settingsModel(cwd));
    const model = await chooseModel(modelSpec, { baseUrl: flags.baseUrl });
    // The folder-trust question comes before the banner; the run factory then finds the folder trusted.
    await offerFolderTrust(flags, cwd);
    process.stdout.write(`${styleText('bold', 'Sage')} ${styleText('dim', `· ${model.id} · ${cwd} · /help for commands`)}\n`);
    // `/name [args]` invokes a user-invocable skill: its instructions become the message.
    const skills = invocableSkills(cwd);
    const help = HELP + skills.map((k) => `  /${k.name}   ${k.description.split('\n')[0]} (skill)\n`).join('');
    let first: string;
    for (;;) {
      first = (await input({ message: styleText('cyan', '›') })).trim();
      if (first === '/exit') return EXIT.ok;
      const invoked = skillCommand(first, skills);
      if (invoked) {
        first = invoked;
        break;
      }
      if (first === '/help') process.stdout.write(help);
      else if (first.startsWith('/')) process.stdout.write(styleText('yellow', `Unknown command ${first}; /help lists them.\n`));
      else if (first !== '') break;
    }
    const onCommand = (command: string) => {
      if (command === '/exit') return 'exit' as const;
      if (command === '/help') {
        process.stdout.write(help);
        return 'handled' as const;
      }
      const invoked = skillCommand(command, skills);
      return invoked ? { message: invoked } : ('unknown' as const);
    };
    return (await executeDurableRun({ task: first, flags, modelSpec, model, cwd, session: true, onCommand, ephemeral: flags.ephemeral })).code;
  } catch (error) {
    if ((error as Error).name === 'ExitPromptError') return EXIT.cancelled;
    return reportError(error, flags?.verbose ?? raw.verbose === true);
  }
}
