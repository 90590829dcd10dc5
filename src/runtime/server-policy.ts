import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { InvalidInputError, SageError, formatZodError } from '../errors/index.js';
import { loadSettings, permissionModeSchema, rulesFromLists, type PermissionMode, type ResolvedSettings, type RuleSpec } from '../permission/index.js';
import type { UserPermissionRecord } from '../store/index.js';
import { ServerConfigError } from './errors.js';
import type { Principal, Role } from './principal.js';
import { ruleTextSchema } from './rule-text.js';

/** A request asked for more than the operator's policy allows (403). */
export class PolicyForbiddenError extends SageError {
  readonly field?: string;
  constructor(message: string, options?: { field?: string }) {
    super('policy_forbidden', message);
    this.field = options?.field;
  }
}

/** The modes clients may ask for unless the operator says otherwise: never bypassPermissions. */
export const DEFAULT_CLIENT_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'dontAsk'];

/** The `server` key of a settings file (managed or the host user's). */
export const serverPolicyKeySchema = z
  .object({
    /** The permission modes a client may ask for in POST /runs. */
    permissionModes: z.array(permissionModeSchema).min(1, 'list at least one permission mode').optional()
      .meta({ description: 'The permission modes a client may ask for', default: [...DEFAULT_CLIENT_MODES] }),
    /** Whether non-admin clients may add allow rules (POST /runs `allow`, their own per-user allow list). */
    clientAllowRules: z.boolean().optional()
      .meta({ description: 'Whether non-admin clients may add allow rules (in POST /runs, or to their own list)', default: false }),
    /** Server-wide rules applied to every web run before anything a client sent. */
    deny: z.array(ruleTextSchema).optional().describe('Deny rules for every web and chat run, ahead of a client\'s'),
    ask: z.array(ruleTextSchema).optional().describe('Ask rules for every web and chat run, ahead of a client\'s'),
    /** The external agents (presets) a client may start with POST /runs `agent`; none unless listed. */
    agents: z.array(z.string().min(1)).optional()
      .describe('The external agents a client may start (e.g. "claude-code"); none unless listed'),
  })
  .strict();
export type ServerPolicyKey = z.infer<typeof serverPolicyKeySchema>;

/** `sage serve` policy flags, as commander hands them over. */
export const serverPolicyFlagsSchema = z
  .object({
    permissionModes: z
      .string()
      .transform((s) => s.split(',').map((m) => m.trim()).filter(Boolean))
      .pipe(z.array(permissionModeSchema).min(1, 'list at least one permission mode, e.g. --permission-modes default,plan'))
      .optional(),
    allowClientRules: z.boolean().optional(),
    deny: z.array(ruleTextSchema).default([]),
    ask: z.array(ruleTextSchema).default([]),
    agents: z
      .string()
      .transform((s) => s.split(',').map((m) => m.trim()).filter(Boolean))
      .pipe(z.array(z.string().min(1)).min(1, 'list at least one agent, e.g. --agents claude-code'))
      .optional(),
    /** `--allow-unsandboxed-agents`: a client may start an agent with `sandbox: "off"` (unconfined). */
    allowUnsandboxedAgents: z.boolean().optional(),
  })
  .strict();
export type ServerPolicyFlags = z.input<typeof serverPolicyFlagsSchema>;

const serverPolicyConfigSchema = z
  .object({
    permissionModes: z.array(permissionModeSchema).min(1, 'list at least one permission mode').optional(),
    clientAllowRules: z.boolean().optional(),
    deny: z.array(ruleTextSchema).optional(),
    ask: z.array(ruleTextSchema).optional(),
    agents: z.array(z.string().min(1)).optional(),
    unsandboxedAgents: z.boolean().optional(),
    /**
     * When set, each web run's gate also gets the host's settings (see `settingsFor`): the managed
     * file in full, the deny and ask rules of the other files. Unset: no settings file is read.
     */
    settings: z.object({ home: z.string().min(1), managedFile: z.string().min(1).optional() }).strict().optional(),
  })
  .strict();
export type ServerPolicyConfig = z.input<typeof serverPolicyConfigSchema>;

/**
 * What the operator lets clients do to a run's permission gate. Checked when a run starts, when a
 * per-user rule is added or removed, and applied again to every gate the server builds, so that no
 * request, answer or per-user rule can weaken it.
 */
export class ServerPolicy {
  readonly permissionModes: readonly PermissionMode[];
  readonly clientAllowRules: boolean;
  readonly deny: readonly string[];
  readonly ask: readonly string[];
  /** The external agents clients may start (none by default: an agent is a program the host runs). */
  readonly agents: readonly string[];
  /** Whether a client may turn an agent's OS sandbox off (`sage serve --allow-unsandboxed-agents`); never by default. */
  readonly unsandboxedAgents: boolean;
  readonly settings?: { home: string; managedFile?: string };

  constructor(input: ServerPolicyConfig = {}) {
    const parsed = serverPolicyConfigSchema.safeParse(input);
    if (!parsed.success) throw new ServerConfigError(`Invalid server policy: ${formatZodError(parsed.error)}`);
    const config = parsed.data;
    this.permissionModes = config.permissionModes ?? DEFAULT_CLIENT_MODES;
    this.clientAllowRules = config.clientAllowRules ?? false;
    this.deny = config.deny ?? [];
    this.ask = config.ask ?? [];
    this.agents = config.agents ?? [];
    this.unsandboxedAgents = config.unsandboxedAgents ?? false;
    this.settings = config.settings;
  }

  /** The mode a run gets: the one asked for if the policy allows it (403 otherwise). */
  modeFor(requested: PermissionMode | undefined): PermissionMode {
    const mode = requested ?? this.defaultMode();
    if (!this.permissionModes.includes(mode)) {
      throw new PolicyForbiddenError(`permissionMode "${mode}" is not allowed on this server; the operator allows ${this.permissionModes.join(', ')}.`, { field: 'permissionMode' });
    }
    return mode;
  }

  /** A run request's external agent: only one the operator listed (403 naming `agent` otherwise). */
  checkAgent(agent: string): string {
    if (!this.agents.includes(agent)) {
      const allowed = this.agents.length ? `the operator allows ${this.agents.join(', ')}` : 'the operator allows none (sage serve --agents, or server.agents in the settings)';
      throw new PolicyForbiddenError(`agent "${agent}" is not allowed on this server; ${allowed}.`, { field: 'agent' });
    }
    return agent;
  }

  /** A run request's `sandbox`: `off` only when the operator allowed it at `sage serve` start (403 naming `sandbox` otherwise). */
  checkSandbox(sandbox: 'on' | 'off' | undefined): void {
    if (sandbox === 'off' && !this.unsandboxedAgents) {
      throw new PolicyForbiddenError('"sandbox": "off" is not allowed on this server: its agents run in their OS sandbox; the operator may allow unconfined agents with sage serve --allow-unsandboxed-agents.', { field: 'sandbox' });
    }
  }

  /** Whether `role` may bring its own allow rules (admins always may). */
  mayAddAllowRules(role: Role): boolean {
    return role === 'admin' || this.clientAllowRules;
  }

  /** Checks a POST /runs body against the policy; returns the mode the run gets. */
  checkStart(request: { permissionMode?: PermissionMode; allow?: readonly string[] }, role: Role): PermissionMode {
    const mode = this.modeFor(request.permissionMode);
    if ((request.allow?.length ?? 0) > 0 && !this.mayAddAllowRules(role)) {
      throw new PolicyForbiddenError('"allow" rules in a run request are not allowed on this server: the operator lets only admins add allow rules. Ask for approval when the run asks, or ask an admin.', { field: 'allow' });
    }
    return mode;
  }

  /**
   * The permissions a stored run gets now (a resumed run is rebuilt with the current policy): a
   * mode the policy no longer allows falls back to the default mode, allow rules the run's owner
   * may no longer add are dropped. The current deny and ask lists always apply (`rules()`).
   */
  currentFor(stored: { permissionMode: PermissionMode; allow: readonly string[] }, role: Role): { mode: PermissionMode; allow: readonly string[] } {
    return {
      mode: this.permissionModes.includes(stored.permissionMode) ? stored.permissionMode : this.defaultMode(),
      allow: this.mayAddAllowRules(role) ? stored.allow : [],
    };
  }

  /** The server-wide rules, ahead of anything a client sent. */
  rules(): RuleSpec[] {
    return rulesFromLists({ deny: this.deny, ask: this.ask }, 'server policy');
  }

  /**
   * The host's settings for a run in `cwd`: every deny and ask rule of the managed, project, local
   * and user files, and of the `.sage/` files of each folder above cwd up to `projectRoot` (they can
   * only make the gate stricter), allow rules from the managed file and — in a folder the host
   * trusts — from that folder's `.sage/settings.local.json`, where an admin's
   * "always, this project" answer is saved (see `projectRulesFor`); no `defaultMode` (the run's mode
   * is the client's, within `permissionModes`). The committed `.sage/settings.json` and the host
   * user's file never add allow rules to a web run.
   */
  settingsFor(cwd: string, projectRoot?: string): ResolvedSettings | undefined {
    if (!this.settings) return undefined;
    const { home, managedFile } = this.settings;
    const loaded = loadSettings({ projectRoot: cwd, home, ...(projectRoot ? { upTo: projectRoot } : {}), ...(managedFile ? { managedFile } : {}) });
    const fromManaged = (source: string | undefined) => managedFile !== undefined && source === managedFile;
    // loadSettings already drops the allow rules of an untrusted folder's files (a cloned repository
    // may commit a settings.local.json); the check is repeated here so this filter alone says it.
    const trustedLocal = new Set(loaded.folders.filter((f) => f.trusted).map((f) => f.local));
    const fromProjectLocal = (source: string | undefined) => source !== undefined && trustedLocal.has(source);
    return {
      ...loaded,
      rules: loaded.rules.filter((r) => r.behavior !== 'allow' || fromManaged(r.source) || fromProjectLocal(r.source)),
      defaultMode: undefined,
    };
  }

  /** May `principal` add a `behavior` rule to `userId`'s list? `existing` is that user's list now. */
  checkUserRuleAdd(principal: Principal, userId: string, rule: string, behavior: 'allow' | 'deny', existing: readonly UserPermissionRecord[]): void {
    if (principal.role === 'admin') return;
    if (behavior === 'allow') {
      if (!this.clientAllowRules) {
        throw new PolicyForbiddenError(`Adding allow rules is not allowed on this server: the operator lets only admins add them. You may add deny rules to yourself.`, { field: 'rule' });
      }
      // An allow takes the same rule off the deny list: only a deny the user made themselves.
      const deny = existing.find((r) => r.rule === rule && r.behavior === 'deny');
      if (deny && deny.createdBy !== principal.userId) throw protectedDeny(rule, userId, deny);
    }
  }

  /** May `principal` remove `record` from its user's list? A non-admin never removes a deny someone else put there. */
  checkUserRuleRemove(principal: Principal, record: UserPermissionRecord): void {
    if (principal.role === 'admin' || record.behavior === 'allow') return;
    if (record.createdBy !== principal.userId) throw protectedDeny(record.rule, record.userId, record);
  }

  private defaultMode(): PermissionMode {
    return this.permissionModes.includes('default') ? 'default' : this.permissionModes[0]!;
  }
}

function protectedDeny(rule: string, userId: string, record: UserPermissionRecord): PolicyForbiddenError {
  const by = record.createdBy ? `"${record.createdBy}"` : 'an administrator';
  return new PolicyForbiddenError(`The deny rule "${rule}" of "${userId}" was added by ${by}; only an admin may remove it.`, { field: 'rule' });
}

const FLAG_NAMES: Record<string, string> = { permissionModes: '--permission-modes', allowClientRules: '--allow-client-rules', deny: '--deny', ask: '--ask', agents: '--agents', allowUnsandboxedAgents: '--allow-unsandboxed-agents' };

export interface ResolvePolicyOptions {
  /** `sage serve` flags (validated here). */
  flags?: ServerPolicyFlags;
  /** Defaults to process.env; reads SAGE_HOME and SAGE_MANAGED_SETTINGS. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The operator's policy from the `server` key of the managed settings file and of the host user's
 * settings (`$SAGE_HOME/.sage/settings.json`), and from `sage serve` flags. Scalars: managed, then
 * flags, then the user file; the managed file is a ceiling that neither can raise (a flag that asks
 * for more is a startup error). Deny and ask lists add up. A file that does not load stops the
 * server (fail closed), naming the file and the field (ServerConfigError); a bad flag is an
 * InvalidInputError naming the flag.
 */
export function resolveServerPolicy(options: ResolvePolicyOptions = {}): ServerPolicy {
  const env = options.env ?? process.env;
  const home = env['SAGE_HOME'] || homedir();
  const managedFile = env['SAGE_MANAGED_SETTINGS'] || undefined;
  const parsedFlags = serverPolicyFlagsSchema.safeParse(options.flags ?? {});
  if (!parsedFlags.success) {
    // A bad flag is a usage error (exit 2), named as typed on the command line.
    const key = String(parsedFlags.error.issues[0]?.path[0] ?? '');
    const flag = FLAG_NAMES[key] ?? key;
    throw new InvalidInputError(`Invalid ${flag}: ${formatZodError(parsedFlags.error)}`, { field: flag });
  }
  const flags = parsedFlags.data;
  const managedJson = managedFile ? readJson(managedFile, true) : undefined;
  const managed = managedFile ? policyKeyOf(managedFile, managedJson) : undefined;
  const userFile = path.join(home, '.sage', 'settings.json');
  const user = policyKeyOf(userFile, readJson(userFile, false));
  // Claude Code's managed switch: `permissions.disableBypassPermissionsMode: "disable"`.
  const bypassDisabled = (managedJson as { permissions?: { disableBypassPermissionsMode?: unknown } } | undefined)?.permissions?.disableBypassPermissionsMode === 'disable';

  if (managedFile) {
    // The managed file's own rules apply to every web run: a broken one must not be skipped.
    const problems = loadSettings({ projectRoot: path.dirname(managedFile), home, managedFile }).problems.filter((p) => p.file === managedFile && p.severity === 'error');
    if (problems.length > 0) throw new ServerConfigError(`The managed settings file ${managedFile} does not load: ${problems.map((p) => `${p.key}: ${p.problem}`).join('; ')}`);
  }

  let permissionModes = flags.permissionModes ?? user?.permissionModes ?? managed?.permissionModes ?? DEFAULT_CLIENT_MODES;
  if (managed?.permissionModes) {
    const ceiling = managed.permissionModes;
    const beyond = permissionModes.filter((m) => !ceiling.includes(m));
    if (flags.permissionModes && beyond.length > 0) {
      throw new ServerConfigError(`--permission-modes names ${beyond.join(', ')}, which the managed settings (${managedFile}) do not allow; they allow ${ceiling.join(', ')}.`);
    }
    permissionModes = permissionModes.filter((m) => ceiling.includes(m));
    if (permissionModes.length === 0) permissionModes = ceiling;
  }

  if (bypassDisabled && permissionModes.includes('bypassPermissions')) {
    if (flags.permissionModes) throw new ServerConfigError(`--permission-modes names bypassPermissions, which the managed settings (${managedFile}) disable (permissions.disableBypassPermissionsMode).`);
    permissionModes = permissionModes.filter((m) => m !== 'bypassPermissions');
    if (permissionModes.length === 0) throw new ServerConfigError(`The only permission mode configured is bypassPermissions, which the managed settings (${managedFile}) disable.`);
  }

  let clientAllowRules = flags.allowClientRules ?? user?.clientAllowRules ?? managed?.clientAllowRules ?? false;
  if (managed?.clientAllowRules === false) {
    if (flags.allowClientRules) throw new ServerConfigError(`--allow-client-rules is refused: the managed settings (${managedFile}) set server.clientAllowRules to false.`);
    clientAllowRules = false;
  }

  // Agents: the managed file's list is a ceiling, like the modes.
  let agents = flags.agents ?? user?.agents ?? managed?.agents ?? [];
  if (managed?.agents) {
    const beyond = agents.filter((a) => !managed.agents!.includes(a));
    if (flags.agents && beyond.length > 0) throw new ServerConfigError(`--agents names ${beyond.join(', ')}, which the managed settings (${managedFile}) do not allow; they allow ${managed.agents.join(', ') || 'none'}.`);
    agents = agents.filter((a) => managed.agents!.includes(a));
  }

  const union = (...lists: (readonly string[] | undefined)[]) => [...new Set(lists.flatMap((l) => l ?? []))];
  return new ServerPolicy({
    permissionModes: [...new Set(permissionModes)],
    clientAllowRules,
    deny: union(managed?.deny, flags.deny, user?.deny),
    ask: union(managed?.ask, flags.ask, user?.ask),
    agents: [...new Set(agents)],
    ...(flags.allowUnsandboxedAgents ? { unsandboxedAgents: true } : {}),
    settings: { home, ...(managedFile ? { managedFile } : {}) },
  });
}

/** Reads a settings file; a file that cannot be read or parsed is a startup error. */
function readJson(file: string, mustExist: boolean): unknown {
  if (!existsSync(file)) {
    if (mustExist) throw new ServerConfigError(`The managed settings file ${file} (SAGE_MANAGED_SETTINGS) does not exist.`);
    return undefined;
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ServerConfigError(`The settings file ${file} is not valid JSON (${(error as Error).message}); the server does not start without its policy.`, { cause: error });
  }
}

/** The `server` key of a settings file's contents, validated; errors name the file and the key. */
function policyKeyOf(file: string, json: unknown): ServerPolicyKey | undefined {
  if (typeof json !== 'object' || json === null || !('server' in json)) return undefined;
  const parsed = serverPolicyKeySchema.safeParse((json as { server: unknown }).server);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = ['server', ...(issue?.path ?? []).map(String)].join('.');
    throw new ServerConfigError(`The settings file ${file} has an invalid "${key}": ${formatZodError(parsed.error)}`);
  }
  return parsed.data;
}
