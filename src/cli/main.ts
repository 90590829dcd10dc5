import './zod-jitless.js';
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { EXIT } from './exit-codes.js';
import { endQuietlyOnClosedPipe } from './closed-pipe.js';
import { reportError } from './report-error.js';
import { collect } from './run-flags.js';
import { environmentHelp } from './environment-help.js';
import { MODULE_COMMANDS, registerModuleCommands } from './module-commands.js';
import { unknownCommandError } from './unknown-command.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Flags shared by `sage run`, `sage demo` and the interactive session. */
function addRunFlags(command: Command, options: { model: boolean }): Command {
  if (options.model) {
    command
      .option('--model <provider:name>', 'the model: anthropic:<name>, openai:<name>, openai-compatible:<name>, scripted:<file.json>')
      .option('--base-url <url>', 'base URL of an OpenAI-compatible server (Ollama, vLLM, LM Studio)')
      .option('--cwd <dir>', 'working directory of the run (the project root)')
      .option('--db <path>', 'SQLite database the run is recorded in (default .sage/sage.db); SAGE_DATABASE_URL selects Postgres')
      .option('--ephemeral', 'keep the run in memory only: nothing is stored, so it cannot be recovered, listed or answered from elsewhere');
  }
  return command
    .addOption(new Option('--permission-mode <mode>', 'default | acceptEdits | plan | bypassPermissions | dontAsk'))
    .option('--allow <rule>', 'allow rule, e.g. "Bash(npm test *)" (repeatable)', collect, [])
    .option('--ask <rule>', 'ask rule (repeatable)', collect, [])
    .option('--deny <rule>', 'deny rule, e.g. "Read(.env)" (repeatable)', collect, [])
    .option('--mcp-config <file>', 'MCP servers for this run, in .mcp.json\'s shape: { "mcpServers": { name: { command, args, env } | { type: "http", url, headers } } } (repeatable)', collect, [])
    .option('--max-steps <n>', 'stop after n model turns (default 50)')
    .option('--interaction-timeout <seconds>',
      'how long a question or approval waits for an answer (default: approval.timeoutSeconds in settings)')
    .option('--non-interactive', 'no person: answer every request automatically (see --auto)')
    .addOption(new Option('--auto <answer>', 'with --non-interactive: allow or deny every approval (questions get their first option)'))
    .option('--batch', 'no person at all: every ask becomes a deny that says why')
    .option('--json', 'print the run events as JSON lines on stdout, and nothing else')
    .option('--trajectory <file>', 'also write every event to this JSONL file')
    .option('--expand', 'show whole tool results')
    .option('--verbose', 'show permission decisions, and stack traces on errors')
    .option('--ignore-broken-settings', 'go on when a settings file does not load or has a rule that can never match: what is broken is skipped, so its rules are NOT applied (without this flag the run does not start; a broken --allow/--ask/--deny is always refused)');
}

export function buildProgram(): Command {
  const program = new Command('sage')
    .description('Run LLM agents with a human in the loop: every tool call passes a permission gate, and what it cannot decide is asked.')
    .version(pkg.version, '-V, --version', 'output the version number (also -v)')
    .showSuggestionAfterError(true)
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });

  addRunFlags(program, { model: true });
  program.addHelpText('after', () => environmentHelp());
  // A word that is not a command reaches this action (not commander's "too many arguments").
  program.allowExcessArguments(true);
  program.action(async (flags, command: Command) => {
    const word = command.args[0];
    if (word !== undefined) {
      const names = [...new Set([...program.commands.map((c) => c.name()), ...MODULE_COMMANDS, 'help'])];
      throw unknownCommandError(word, names);
    }
    const { sessionCommand } = await import('./session-command.js');
    process.exitCode = await sessionCommand(flags);
  });

  addRunFlags(program.command('run').description('run one task').argument('<task>', 'what the agent should do'), { model: true })
    .option('--detach', 'start the run in the store, print its id, and return (a background process drives it)')
    .option('--agent <name>', "an external coding agent does the work, every tool call through Sage's gate: claude-code, gemini, qwen, codex, or acp (with --agent-command)")
    .option('--agent-command <command line>', "the agent's command line (for --agent acp; overrides the preset and the settings)")
    .option('--agent-env <NAME[=VALUE]>', 'give the agent this variable (NAME alone passes yours); nothing else of your environment reaches it besides PATH, HOME, locale and its own (repeatable)', collect, [])
    .addOption(new Option('--sandbox <on|off>', "the agent's OS sandbox (bubblewrap): its own file access limited to the run's folders, home hidden, Read deny rules' files masked; the network stays. off: unconfined, with a warning (default: on, or agents.<name>.sandbox)").choices(['on', 'off']))
    .option('--continue <runId>', "a follow-up: continue the external agent's session of that run")
    .option('--fork <runId>', "a follow-up in a new branch of the external agent's session of that run")
    .option('--setup <command>', "a setup script run in the run's folder before the work; if it fails, nothing else runs")
    .option('--cleanup <command>', 'a cleanup script run after the work succeeded; its output is shown')
    .addHelpText('after', () => environmentHelp('run'))
    .action(async (task: string, flags) => {
      const { runCommand } = await import('./run-command.js');
      process.exitCode = await runCommand(task, flags);
    });

  addRunFlags(program.command('demo').description('fix a bug in a sample project with a scripted model: no API key, no network'), { model: false })
    .option('--keep', 'keep the scratch copy of the sample project and print where it is')
    .action(async (flags) => {
      const { demoCommand } = await import('./demo-command.js');
      process.exitCode = await demoCommand(flags);
    });

  return program;
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  endQuietlyOnClosedPipe();
  // `sage -v` is how many CLIs are asked their version; commander takes one short flag for it (-V).
  if (argv[2] === '-v') argv = [...argv.slice(0, 2), '--version', ...argv.slice(3)];
  const program = buildProgram();
  await registerOptionalCommands(program, argv);
  const verbose = argv.includes('--verbose');
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    return reportError(error, verbose);
  }
}

/** Sub-commands that live with their modules (permissions, durable runs, the server). */
async function registerOptionalCommands(program: Command, argv: string[]): Promise<void> {
  await registerModuleCommands(program, argv);
}
