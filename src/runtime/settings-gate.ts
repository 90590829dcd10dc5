import { styleText } from 'node:util';
import { storeUserPermissions } from './user-permission-adapter.js';
import { createPermissionEngine, loadSettings, rulesFromLists, trustFolder, type PermissionEngine } from '../permission/index.js';
import { auditLogFromStore } from './store-adapters.js';
import { restoreSessionRules } from './web-gate.js';
import type { RunRecord, Store } from '../store/index.js';
import { ruleLists, type RunSpec } from './run-spec.js';
import { checkSettings } from './settings-check.js';

export interface SettingsGateOptions {
  store: Store;
  home: string;
  /** This process's --ignore-broken-settings (a run started with it keeps it in its spec). */
  ignoreBrokenSettings?: boolean;
  /** A person at a terminal asked whether to trust the folder; undefined: nobody to ask. */
  askTrust?: (cwd: string, files: Record<string, string | undefined>) => Promise<boolean>;
  /** Say skipped files and settings warnings on stderr (the process that drives the run in a terminal). */
  report?: boolean;
  /** A person answers this run's asks at this terminal: the shell grammar is loaded before the first prompt. */
  prompts?: boolean;
}

/**
 * The gate of a run started outside the server (a terminal, `--detach`, an SDK caller): the
 * settings files of its cwd and of each folder above it up to its project root, by scope (managed,
 * local, project, user; a folder's own allow rules and hooks only once it is trusted), the run's own rules, the per-user rules in the store, the audit
 * log in the store, and the risk policy of the engine. Fails closed: a settings file that does not
 * load stops the build (BrokenSettingsError) unless the person chose to skip it.
 */
export async function createSettingsGate(spec: RunSpec, run: RunRecord, options: SettingsGateOptions): Promise<PermissionEngine> {
  const { home, store } = options;
  const typed = ruleLists(spec.rules, 'cli');
  const ignoreBrokenSettings = spec.ignoreBrokenSettings || options.ignoreBrokenSettings === true;
  const upTo = spec.projectRoot ? { upTo: spec.projectRoot } : {};
  await checkSettings({ ...typed, ignoreBrokenSettings }, spec.cwd, { report: false, home, ...upTo });
  let settings = loadSettings({ projectRoot: spec.cwd, home, ...upTo });
  const own = [settings.files.local, settings.files.project];
  if (!settings.trusted && options.askTrust && settings.problems.some((p) => own.includes(p.file) && p.problem.includes('until this folder is trusted'))) {
    // Like Claude Code: a folder's own allow rules and hooks apply only once its person trusts it.
    // The folders above keep their own trust (their deny and ask rules apply either way).
    if (await options.askTrust(spec.cwd, settings.files)) {
      trustFolder(home, spec.cwd);
      settings = loadSettings({ projectRoot: spec.cwd, home, ...upTo });
    }
  }
  const bySource = new Map<string, typeof spec.rules>();
  for (const rule of spec.rules) bySource.set(rule.source, [...(bySource.get(rule.source) ?? []), rule]);
  const rules = [...bySource.entries()].flatMap(([source, list]) => rulesFromLists(ruleLists(list), source));
  const engine = createPermissionEngine({
    settings,
    home,
    rules,
    projectRoot: spec.cwd,
    additionalDirectories: [...settings.additionalDirectories, ...spec.additionalDirectories],
    userStore: storeUserPermissions(store),
    audit: auditLogFromStore(store),
    ...(spec.permissionMode ? { mode: spec.permissionMode } : {}),
  });
  if (options.report) {
    // Errors were refused (or skipped with --ignore-broken-settings, and said so) by checkSettings.
    for (const problem of engine.settingsProblems()) {
      if (problem.severity === 'warning') process.stderr.write(`${styleText('yellow', 'settings warning:')} ${problem.file} ${problem.key}: ${problem.problem}\n`);
    }
  }
  // "Always for this run" answers live in the engine: a resumed run gets them back from its answers.
  await restoreSessionRules(store, engine, run);
  // Load the shell grammar (WASM) before any prompt is drawn: loaded later, in the middle of a
  // terminal prompt's setup, the first key typed at that prompt was lost. A run nobody answers at
  // this terminal (--batch, --json in a pipe, detached) leaves it to the first Bash decision, which
  // loads it (engine.decide): a run that runs no command never pays for it.
  if (options.prompts) await engine.ready();
  return engine;
}
