import { homedir } from 'node:os';
import { styleText } from 'node:util';
import type { PermissionEngine } from '../permission/index.js';
import type { RunFlags } from './run-flags.js';
import { checkSettings } from '../runtime/settings-check.js';

/**
 * The permission engine for an --ephemeral (in-memory) CLI run or the demo; stored runs get theirs
 * from the run factory (src/runtime/settings-gate.ts) with the same settings. It reads: settings files (managed, local, project, user), the run's
 * --allow/--ask/--deny rules and --permission-mode. It fails closed: a settings file or rule that
 * does not load stops the run (see checkSettings; callers run it first, to report before the model
 * is chosen); warnings are printed and the run goes on.
 */
export async function createGate(flags: RunFlags, cwd: string): Promise<PermissionEngine> {
  const { createPermissionEngine, loadSettings, rulesFromLists, trustFolder } = await import('../permission/index.js');
  await checkSettings(flags, cwd, { report: false });
  const home = process.env.SAGE_HOME ?? homedir();
  let settings = loadSettings({ projectRoot: cwd, home });
  if (!settings.trusted && settings.problems.some((p) => p.problem.includes('until this folder is trusted')) && canAsk(flags)) {
    // Like Claude Code: a folder's own allow rules and hooks apply only once its person trusts it.
    if (await askTrust(cwd, settings.files)) {
      trustFolder(home, cwd);
      settings = loadSettings({ projectRoot: cwd, home });
    }
  }
  const rules = rulesFromLists(flags, 'cli');
  const engine = createPermissionEngine({
    settings,
    home,
    rules,
    projectRoot: cwd,
    additionalDirectories: settings.additionalDirectories,
    ...(flags.permissionMode ? { mode: flags.permissionMode } : {}),
  });
  // Errors were refused (or skipped with --ignore-broken-settings, and said so) by checkSettings.
  for (const problem of engine.settingsProblems()) {
    if (problem.severity === 'warning') process.stderr.write(`${styleText('yellow', 'settings warning:')} ${problem.file} ${problem.key}: ${problem.problem}\n`);
  }
  // Load the shell grammar (WASM) before any prompt is drawn: loaded later, in the middle of a
  // terminal prompt's setup, the first key typed at that prompt was lost.
  await engine.ready();
  return engine;
}

/**
 * Asks the person whether to trust `cwd` when its own settings hold allow rules or hooks and the
 * folder is not trusted yet (remembered when they say yes). A session asks this before its banner,
 * as it always did; the run factory then finds the folder trusted.
 */
export async function offerFolderTrust(flags: RunFlags, cwd: string): Promise<void> {
  if (!canAsk(flags)) return;
  const { loadSettings, trustFolder } = await import('../permission/index.js');
  const home = process.env.SAGE_HOME ?? homedir();
  const settings = loadSettings({ projectRoot: cwd, home });
  if (settings.trusted || !settings.problems.some((p) => p.problem.includes('until this folder is trusted'))) return;
  if (await askTrust(cwd, settings.files)) trustFolder(home, cwd);
}

export function canAsk(flags: RunFlags): boolean {
  return Boolean(process.stdin.isTTY) && !flags.batch && !flags.nonInteractive;
}

export async function askTrust(cwd: string, files: Record<string, string | undefined>): Promise<boolean> {
  const { select } = await import('@inquirer/prompts');
  const which = [files.project, files.local].filter(Boolean).join(' and ');
  process.stderr.write(`${styleText(['bold', 'yellow'], '◆ Do you trust this folder?')}\n  ${cwd}\n  ${styleText('dim', `${which} contain allow rules or hooks, which apply only in folders you trust. Deny and ask rules apply either way.`)}\n`);
  try {
    return await select({ message: 'Trust this folder?', choices: [{ name: 'Yes, trust it (remembered)', value: true }, { name: 'No, ignore its allow rules and hooks', value: false }] }, { output: process.stderr });
  } catch {
    return false;
  }
}
