import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { RuleSpec } from './engine-options.js';
import { PermissionRuleError } from './errors.js';
import type { HookDefinition, PostToolUseFunction, PreToolUseFunction } from './hooks.js';
import type { PermissionMode } from './modes.js';
import { BUILTIN_TOOLS, compileRule, isIgnoredAllowRule } from './rule.js';
import { DEFAULT_MEMORY_WINDOW_SECONDS, settingsFileSchema, type SettingsFile } from './settings-schema.js';
import { findProjectRoot, foldersUpTo } from './project-folders.js';
import { isFolderTrusted, trustedFoldersFile } from './trusted-folders.js';

export type SettingsScope = 'managed' | 'cli' | 'local' | 'project' | 'user';

/** A problem found while loading settings: names the file, the key and what is wrong. */
export interface SettingsProblem {
  file: string;
  key: string;
  problem: string;
  severity: 'error' | 'warning';
}

export interface SettingsSources {
  /** The run's folder (where its own `.sage/` lives; "always, this project" writes there). */
  projectRoot: string;
  /**
   * The outermost folder whose settings also apply: each folder from `projectRoot` up to it adds
   * its deny and ask rules, and once trusted its allow rules and hooks, so a run in a subfolder
   * keeps its project's denies. Default: the nearest folder with `.git` (`findProjectRoot`).
   */
  upTo?: string;
  home: string;
  /** Defaults to `process.env.SAGE_MANAGED_SETTINGS`. */
  managedFile?: string;
  /** `--settings FILE`: read in place of the project's file, and trusted. */
  settingsFile?: string;
  /** Command-line flags: rules and mode, above local settings. */
  cli?: { allow?: string[]; ask?: string[]; deny?: string[]; mode?: PermissionMode };
  knownTools?: readonly string[];
}

export interface ResolvedSettings {
  rules: RuleSpec[];
  defaultMode?: PermissionMode;
  /** Some settings file says `disableBypassPermissionsMode: "disable"` (any file: it only makes Sage stricter). */
  bypassDisabled: boolean;
  additionalDirectories: string[];
  approval: { enabled: boolean; strictMode: boolean; toolOverrides: Record<string, boolean>;
    /** Undefined when no file sets it: an approval then waits until it is answered. */
    timeoutSeconds?: number | undefined;
    memoryWindowSeconds: number;
  };
  hooks: { preToolUse: HookDefinition<PreToolUseFunction>[]; postToolUse: HookDefinition<PostToolUseFunction>[] };
  problems: SettingsProblem[];
  files: Record<'managed' | 'local' | 'project' | 'user', string | undefined>;
  /** The folders whose `.sage/` files were read, nearest first, and whether each is trusted. */
  folders: Array<{ folder: string; trusted: boolean; local: string; project: string }>;
  /** Whether the project folder is trusted (its allow rules, hooks and mode apply). */
  trusted: boolean;
}

export function settingsPaths(projectRoot: string, home: string): { project: string; local: string; user: string } {
  return {
    project: path.join(projectRoot, '.sage', 'settings.json'),
    local: path.join(projectRoot, '.sage', 'settings.local.json'),
    user: path.join(home, '.sage', 'settings.json'),
  };
}

interface Layer {
  scope: SettingsScope;
  file: string;
  root: string;
  data: SettingsFile;
  /** Untrusted folders contribute deny and ask rules only. */
  trusted: boolean;
}

/**
 * Loads and merges the settings files. Scalars: managed > command line > local > project > user.
 * Rule lists merge across scopes. A repository's own files apply their deny and ask rules at once,
 * everything else only after the folder is trusted.
 */
export function loadSettings(sources: SettingsSources): ResolvedSettings {
  const paths = settingsPaths(sources.projectRoot, sources.home);
  const managedFile = sources.managedFile ?? process.env.SAGE_MANAGED_SETTINGS;
  const folders = foldersUpTo(sources.projectRoot, sources.upTo ?? findProjectRoot(sources.projectRoot));
  const above = folders.slice(1).flatMap((f) => {
    const p = settingsPaths(f, sources.home);
    return [p.local, p.project];
  });
  const key = JSON.stringify([process.cwd(), folders, sources.home, managedFile ?? null, sources.settingsFile ?? null, sources.cli ?? null, sources.knownTools ?? null]);
  // Looked at before the files are read: a file changed while it is read is loaded again next time.
  const { signature, recent } = filesSignature([managedFile, sources.settingsFile, paths.local, paths.project, ...above, paths.user, trustedFoldersFile(sources.home)]);
  const hit = loaded.get(key);
  if (hit?.signature === signature) return structuredClone(hit.settings);
  const settings = readAndMerge(sources, paths, managedFile, folders);
  if (recent) loaded.delete(key);
  else {
    if (loaded.size >= LOADED_MAX) loaded.delete(loaded.keys().next().value!);
    loaded.set(key, { signature, settings: structuredClone(settings) });
  }
  return settings;
}

/**
 * Settings loaded in this process, by their sources, kept while none of the files they come from
 * (nor the trust file) changed: a run is built again on every resume, and its gate loads the same
 * settings twice (the settings check, then the engine); each load reads, validates and compiles
 * every file and rule (≈ 0.4 ms for two small files, under load, against ≈ 20 µs for the stats).
 * Callers get their own copy.
 */
const loaded = new Map<string, { signature: string; settings: ResolvedSettings }>();
const LOADED_MAX = 64;

/**
 * Each file's inode, size, mtime and ctime, or that it is absent: an edit, creation or removal
 * shows. A file's times tick by the kernel's clock (a few ms), so two writes of the same size in one
 * tick look alike: a file changed in the last RECENT_MS is `recent`, and such a load is not kept.
 */
function filesSignature(files: readonly (string | undefined)[]): { signature: string; recent: boolean } {
  const since = BigInt(Date.now() - RECENT_MS) * 1_000_000n;
  let recent = false;
  const signature = files
    .map((file) => {
      if (!file) return '-';
      let s;
      try {
        s = statSync(file, { bigint: true, throwIfNoEntry: false });
      } catch (error) {
        // Not a file to read (a path through a file, no permission): read as absent, as existsSync says.
        return `!${(error as NodeJS.ErrnoException).code ?? ''}`;
      }
      if (!s) return '0';
      if (s.mtimeNs >= since || s.ctimeNs >= since) recent = true;
      return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    })
    .join('|');
  return { signature, recent };
}

const RECENT_MS = 100;

function readAndMerge(sources: SettingsSources, paths: ReturnType<typeof settingsPaths>, managedFile: string | undefined, folders: readonly string[]): ResolvedSettings {
  const problems: SettingsProblem[] = [];
  const trusted = isFolderTrusted(sources.home, sources.projectRoot);
  const layers: Layer[] = [];
  const userFolder = path.join(sources.home, '.sage');
  const add = (scope: SettingsScope, file: string | undefined, root: string, layerTrusted: boolean) => {
    if (!file) return;
    const data = readSettings(file, problems, scope === 'managed' || scope === 'cli');
    if (data) layers.push({ scope, file, root, data, trusted: layerTrusted });
  };
  add('managed', managedFile, managedFile ? path.dirname(managedFile) : sources.projectRoot, true);
  if (sources.settingsFile) add('cli', sources.settingsFile, sources.projectRoot, true);
  add('local', paths.local, sources.projectRoot, trusted);
  if (!sources.settingsFile) add('project', paths.project, sources.projectRoot, trusted);
  // The folders above, up to the project root: nearer ones first; each trusted on its own. The
  // home folder's `.sage/` above a run is the user's own, read once, as the user's.
  const above = folders.slice(1).map((folder) => ({ folder, trusted: isFolderTrusted(sources.home, folder), ...settingsPaths(folder, sources.home) }));
  for (const f of above) {
    if (f.project === paths.user) continue;
    add('local', f.local, f.folder, f.trusted);
    add('project', f.project, f.folder, f.trusted);
  }
  add('user', paths.user, userFolder, true);

  const known = new Set([...BUILTIN_TOOLS, ...(sources.knownTools ?? [])]);
  const rules: RuleSpec[] = [];
  const pushRules = (list: 'allow' | 'ask' | 'deny', entries: string[] | undefined, file: string, root: string, layer?: Layer) => {
    entries?.forEach((rule, i) => {
      const key = `permissions.${list}[${i}]`;
      if (layer && !layer.trusted && list === 'allow') {
        problems.push({ file, key, problem: `the allow rule ${rule} is not applied until this folder is trusted`, severity: 'warning' });
        return;
      }
      const problem = ruleProblem(rule, list, root, sources.home, known);
      if (problem) problems.push({ file, key, ...problem });
      if (problem?.severity !== 'error') rules.push({ rule, behavior: list, source: file, root });
    });
  };
  for (const layer of layers) {
    for (const list of ['deny', 'ask', 'allow'] as const) pushRules(list, layer.data.permissions?.[list], layer.file, layer.root, layer);
    if (!layer.trusted && (layer.data.hooks || layer.data.permissions?.defaultMode || layer.data.permissions?.additionalDirectories || layer.data.approval)) {
      problems.push({ file: layer.file, key: '(root)', problem: 'hooks, defaultMode, additionalDirectories and approval settings are not applied until this folder is trusted', severity: 'warning' });
    }
  }
  for (const list of ['deny', 'ask', 'allow'] as const) pushRules(list, sources.cli?.[list], 'command line', sources.projectRoot);

  const scalarLayers = layers.filter((l) => l.trusted);
  const first = <T>(pick: (d: SettingsFile) => T | undefined, cliValue?: T): T | undefined => {
    const managed = scalarLayers.find((l) => l.scope === 'managed');
    const fromManaged = managed ? pick(managed.data) : undefined;
    if (fromManaged !== undefined) return fromManaged;
    if (cliValue !== undefined) return cliValue;
    for (const l of scalarLayers) if (l.scope !== 'managed') {
      const v = pick(l.data);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const toolOverrides: Record<string, boolean> = {};
  for (const l of [...scalarLayers].reverse()) Object.assign(toolOverrides, l.data.approval?.toolOverrides ?? {});
  const managedOverrides = scalarLayers.find((l) => l.scope === 'managed')?.data.approval?.toolOverrides;
  if (managedOverrides) Object.assign(toolOverrides, managedOverrides);

  const hooks: ResolvedSettings['hooks'] = { preToolUse: [], postToolUse: [] };
  for (const l of scalarLayers) {
    for (const [event, target] of [['PreToolUse', hooks.preToolUse], ['PostToolUse', hooks.postToolUse]] as const) {
      (l.data.hooks?.[event] ?? []).forEach((matcher, m) => {
        matcher.hooks.forEach((h, k) => {
          const key = `hooks.${event}[${m}].hooks[${k}]`;
          if (h.type !== 'command') {
            problems.push({ file: l.file, key, problem: `Sage does not run "${h.type}" hooks; this hook is skipped and the rest of the file applies`, severity: 'warning' });
            return;
          }
          if (!h.command || h.command.trim().length === 0) {
            problems.push({ file: l.file, key, problem: 'the command hook has no command; it is skipped', severity: 'error' });
            return;
          }
          (target as HookDefinition<unknown>[]).push({ name: `${h.command} (${l.file})`, matcher: matcher.matcher, command: h.command, timeoutMs: h.timeout ? h.timeout * 1000 : undefined });
        });
      });
    }
  }
  return {
    rules,
    defaultMode: first((d) => d.permissions?.defaultMode, sources.cli?.mode),
    bypassDisabled: layers.some((l) => l.data.permissions?.disableBypassPermissionsMode === 'disable'),
    additionalDirectories: scalarLayers.flatMap((l) => (l.data.permissions?.additionalDirectories ?? []).map((d) => path.resolve(l.root === userFolder ? sources.home : l.scope === 'managed' || l.scope === 'cli' ? sources.projectRoot : l.root, d.replace(/^~(?=\/|$)/, sources.home)))),
    approval: {
      enabled: first((d) => d.approval?.enabled) ?? true,
      strictMode: first((d) => d.approval?.strictMode) ?? false,
      toolOverrides,
      timeoutSeconds: first((d) => d.approval?.timeoutSeconds),
      memoryWindowSeconds: first((d) => d.approval?.memoryWindowSeconds) ?? DEFAULT_MEMORY_WINDOW_SECONDS,
    },
    hooks,
    problems,
    files: { managed: managedFile, local: paths.local, project: sources.settingsFile ?? paths.project, user: paths.user },
    folders: [{ folder: path.resolve(sources.projectRoot), trusted, local: paths.local, project: paths.project }, ...above.map(({ folder, trusted: t, local, project }) => ({ folder, trusted: t, local, project }))],
    trusted,
  };
}

function readSettings(file: string, problems: SettingsProblem[], mustExist: boolean): SettingsFile | undefined {
  if (!existsSync(file)) {
    if (mustExist) problems.push({ file, key: '(root)', problem: 'the file does not exist', severity: 'error' });
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    problems.push({ file, key: '(root)', problem: `not valid JSON (${cause instanceof Error ? cause.message : String(cause)})`, severity: 'error' });
    return undefined;
  }
  const parsed = settingsFileSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) problems.push({ file, key: issue.path.map(String).join('.') || '(root)', problem: issue.message, severity: 'error' });
  // Deny and ask rules of a file with an unrelated mistake still apply: a typo must not open a door.
  const permissions = (json as { permissions?: Record<string, unknown> } | null)?.permissions;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((r): r is string => typeof r === 'string') : undefined);
  return { permissions: { deny: strings(permissions?.deny), ask: strings(permissions?.ask) } };
}

/** Reports a rule that can never match: malformed, or naming a tool Sage does not know. */
export function ruleProblem(rule: string, list: 'allow' | 'ask' | 'deny', root: string, home: string, known: ReadonlySet<string>): Omit<SettingsProblem, 'file' | 'key'> | undefined {
  let compiled;
  try {
    compiled = compileRule(rule, list, { source: '', root }, home);
  } catch (error) {
    const message = error instanceof PermissionRuleError ? error.message : String(error);
    return { problem: `${message}; this rule can never match`, severity: 'error' };
  }
  if (isIgnoredAllowRule(compiled, list)) {
    return { problem: `Claude Code ignores Write(path) allow rules and so does Sage: ${rule} never allows anything; write Edit(${compiled.specifier ?? '*'}) to allow writes there`, severity: 'warning' };
  }
  if (compiled.toolLiteral && !known.has(compiled.tool) && !compiled.tool.startsWith('mcp__')) {
    return { problem: `the rule ${rule} names the tool ${compiled.tool}, which Sage does not know; it can never match`, severity: 'warning' };
  }
  return undefined;
}
