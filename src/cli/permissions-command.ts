/**
 * `sage permissions …`: check a call against the rules, and list, add or remove rules in the
 * settings files or the per-user store. The CLI lead wires `registerPermissionsCommand` into src/cli.
 */
import path from 'node:path';
import os from 'node:os';
import { Command, CommanderError } from 'commander';
import { builtinToolInfo } from '../permission/builtin-tool-traits.js';
import { createPermissionEngine } from '../permission/engine.js';
import { permissionModeSchema, type PermissionMode } from '../permission/modes.js';
import type { GateCall } from '../permission/types.js';
import { parseRule } from '../permission/rule.js';
import { loadSettings, settingsPaths } from '../permission/settings-loader.js';
import { addRuleToSettingsFile, removeRuleFromSettingsFile } from '../permission/settings-writer.js';
import { isFolderTrusted, trustCommandFor } from '../permission/trusted-folders.js';
import type { UserPermissionStore } from '../permission/user-permission-store.js';
import { BrokenSettingsError } from '../runtime/settings-check.js';
import { UsageError } from './usage-error.js';
import { openSqliteStore } from '../store/open-store.js';
import { gateOfRequest } from '../runtime/gate-of-request.js';

/** The surfaces whose run's gate `check --surface` builds (a subagent's is its root's; sdk is a library's). */
const CHECK_SURFACES = ['terminal', 'detached', 'web', 'chat'] as const;

export interface PermissionsCommandDeps {
  /** Where `--user` rules live (the store's backend); without it `--user` is refused. */
  userStore?: UserPermissionStore;
  home?: string;
  stdout?: (line: string) => void;
  stderr?: (line: string) => void;
  /** Called with 2 on bad arguments (default: process.exitCode = 2). */
  exit?: (code: number) => void;
}

export function registerPermissionsCommand(program: Command, deps: PermissionsCommandDeps = {}): Command {
  const out = deps.stdout ?? ((line) => process.stdout.write(`${line}\n`));
  const err = deps.stderr ?? ((line) => process.stderr.write(`${line}\n`));
  const exit = deps.exit ?? ((code) => { process.exitCode = code; });
  // SAGE_HOME moves ~/.sage (tests, sandboxes), as in the rest of the CLI.
  const home = deps.home ?? (process.env.SAGE_HOME || os.homedir());
  const run = (fn: (...args: any[]) => Promise<void> | void) => async (...args: any[]) => {
    try {
      await fn(...args);
    } catch (error) {
      err(`sage permissions: ${error instanceof Error ? error.message : String(error)}`);
      // Settings that do not load are a usage error, as for sage run (exit 2).
      exit(error instanceof UsageError || error instanceof CommanderError || BrokenSettingsError.isInstance(error) ? 2 : 1);
    }
  };
  const permissions = program.command('permissions').description('Check permission decisions and manage permission rules');

  permissions.command('check')
    .description('Print the PermissionDecision for one tool call as JSON: the answer a run of that surface gets')
    .requiredOption('--tool <name>', 'tool name, e.g. Bash')
    .requiredOption('--input <json>', 'the tool input as a JSON object')
    .option('--permission-mode <mode>', 'default | acceptEdits | plan | bypassPermissions | dontAsk')
    .option('--surface <surface>', `the run's surface, whose gate answers: ${CHECK_SURFACES.join(' | ')} (default terminal)`)
    .option('--settings <file>', 'a settings file read in place of the project one (trusted); a what-if, not a run\'s gate')
    .option('--cwd <dir>', 'the project folder', process.cwd())
    .option('--user <id>', 'the user whose stored permissions apply', 'cli')
    .action(run(async (opts: { tool: string; input: string; permissionMode?: string; surface?: string; settings?: string; cwd: string; user: string }) => {
      let input: unknown;
      try {
        input = JSON.parse(opts.input);
      } catch {
        throw new UsageError(`--input is not valid JSON: ${opts.input}`);
      }
      if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new UsageError('--input must be a JSON object');
      const mode = opts.permissionMode === undefined ? undefined : permissionModeSchema.safeParse(opts.permissionMode);
      if (mode && !mode.success) throw new UsageError(`--permission-mode must be one of ${permissionModeSchema.options.join(', ')}`);
      const named = opts.surface;
      const surface = CHECK_SURFACES.find((s) => s === (named ?? 'terminal'));
      if (!surface) throw new UsageError(`--surface must be one of ${CHECK_SURFACES.join(', ')}`);
      const cwd = path.resolve(opts.cwd);
      const call = { toolCallId: 'cli-check', toolName: opts.tool, input, tool: builtinToolInfo(opts.tool) };
      if (opts.settings === undefined) {
        out(JSON.stringify(await runGateDecision({ surface, cwd, user: opts.user, call, ...(mode ? { mode: mode.data } : {}) })));
        return;
      }
      if (named !== undefined) throw new UsageError('--settings replaces the project file, which no run does: drop --surface (or --settings)');
      const settings = loadSettings({ projectRoot: cwd, home, settingsFile: path.resolve(opts.settings), cli: { mode: mode?.data } });
      const broken = settings.problems.find((p) => p.severity === 'error' && p.key === '(root)');
      if (broken) throw new UsageError(`${broken.file}: ${broken.problem}`);
      // Problems go to stderr (stdout stays one JSON object): a skipped hook or an ignored rule is never silent.
      for (const p of settings.problems) err(`${p.severity}: ${p.file} ${p.key}: ${p.problem}`);
      const engine = createPermissionEngine({ home, projectRoot: cwd, settings, userStore: deps.userStore, ...(mode ? { mode: mode.data } : {}) });
      const decision = await engine.decide(call, { runId: 'cli-check', sessionId: 'cli-check', userId: opts.user, channel: 'cli', cwd });
      out(JSON.stringify(decision));
    }));

  /**
   * The decision of the gate a new run of `surface` in `cwd` gets (the run factory's, through an
   * in-memory store that is given the user's stored rules): what that run would be told.
   */
  const runGateDecision = async (check: { surface: (typeof CHECK_SURFACES)[number]; cwd: string; user: string; mode?: PermissionMode; call: GateCall }) => {
    const store = await openSqliteStore(':memory:');
    try {
      const stored = deps.userStore ? await deps.userStore.list(check.user) : { allow: [], deny: [] };
      for (const behavior of ['allow', 'deny'] as const) {
        for (const rule of stored[behavior]) await store.addUserPermission({ userId: check.user, rule, behavior, createdBy: check.user });
      }
      const request = { task: 'sage permissions check', surface: check.surface, model: 'scripted:permissions-check', cwd: check.cwd, principal: check.user, ...(check.mode ? { permissionMode: check.mode } : {}) };
      const { gate, run } = await gateOfRequest(request, { store, home, userId: check.user });
      return await gate.decide(check.call, { runId: run.id, sessionId: run.sessionId, userId: check.user, channel: run.channel, cwd: check.cwd });
    } finally {
      await store.close();
    }
  };

  const scoped = (cmd: Command) => cmd
    .option('--user <id>', 'use the per-user permission store instead of a settings file')
    .option('--scope <scope>', 'session | local | project | user', 'local')
    .option('--cwd <dir>', 'the project folder', process.cwd());
  type ScopeOpts = { user?: string; scope: string; cwd: string };
  const fileFor = (opts: ScopeOpts): string => {
    const files = settingsPaths(path.resolve(opts.cwd), home);
    if (opts.scope === 'session') throw new UsageError('--scope session: session rules live only inside a running session; use local, project or user');
    if (opts.scope === 'local' || opts.scope === 'project' || opts.scope === 'user') return files[opts.scope];
    throw new UsageError(`--scope must be one of session, local, project, user (got ${opts.scope})`);
  };
  const store = (): UserPermissionStore => {
    if (!deps.userStore) throw new UsageError('--user needs a permission store, and none is configured');
    return deps.userStore;
  };
  const checkRule = (rule: string) => {
    try {
      parseRule(rule);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  };

  scoped(permissions.command('list').description('List the rules in force, with where each comes from'))
    .action(run(async (opts: ScopeOpts) => {
      if (opts.user) {
        const lists = await store().list(opts.user);
        out(JSON.stringify({ user: opts.user, ...lists }));
        return;
      }
      const settings = loadSettings({ projectRoot: path.resolve(opts.cwd), home });
      out(JSON.stringify({ rules: settings.rules, problems: settings.problems }));
    }));
  for (const behavior of ['allow', 'deny'] as const) {
    scoped(permissions.command(`${behavior} <rule>`).description(behavior === 'allow' ? "Add an allow rule (in a folder's own settings it applies once the folder is trusted: sage trust DIR)" : 'Add a deny rule (it applies whether or not the folder is trusted)'))
      .action(run(async (rule: string, opts: ScopeOpts) => {
        checkRule(rule);
        if (opts.user) await store().add(opts.user, behavior, rule);
        else addRuleToSettingsFile(fileFor(opts), behavior, rule);
        out(JSON.stringify({ added: rule, behavior, to: opts.user ? `user:${opts.user}` : fileFor(opts) }));
        // A folder's own allow rules wait for its trust (deny rules apply either way): say so, and how.
        const cwd = path.resolve(opts.cwd);
        if (behavior === 'allow' && !opts.user && opts.scope !== 'user' && !isFolderTrusted(home, cwd)) {
          err(`warning: ${cwd} is not trusted, so this allow rule is not applied until it is; trust it with: ${trustCommandFor(cwd)}`);
        }
      }));
  }
  scoped(permissions.command('remove <rule>').description('Remove a rule from every list of the scope'))
    .action(run(async (rule: string, opts: ScopeOpts) => {
      const removed = opts.user ? await store().remove(opts.user, rule) : removeRuleFromSettingsFile(fileFor(opts), rule);
      out(JSON.stringify({ removed, rule }));
    }));
  return permissions;
}
