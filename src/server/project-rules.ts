import { existsSync, readFileSync } from 'node:fs';
import type { InteractionResponse } from '../interaction/index.js';
import { isFolderTrusted, settingsPaths, trustCommandFor } from '../permission/index.js';
import { PolicyForbiddenError, type ServerPolicy } from '../runtime/server-policy.js';
import type { RunRecord } from '../store/index.js';
import type { Principal } from './auth.js';
import { ConflictError } from './errors.js';

/**
 * "Always, this project": the rule goes to `.sage/settings.local.json` in the run's folder, the
 * file the CLI reads too, so it applies to every later run there, web or terminal. Everyone's
 * runs in that folder get it, which is why only an admin may save one, and only in a folder the
 * host trusts: the server applies the allow rules of that file to web runs only then (a cloned
 * repository may commit one).
 */
export interface ProjectRules {
  cwd: string;
  file: string;
  trusted: boolean;
  /** The allow rules of the file now (empty when the folder is not trusted: they do not apply). */
  allow: string[];
  /** Whether the caller may save an "always, this project" answer here; `why` says why not. */
  canSave: boolean;
  why?: string;
}

export function runCwd(run: RunRecord): string | undefined {
  return typeof run.options['cwd'] === 'string' ? run.options['cwd'] : undefined;
}

/** The project rules of `cwd` as `principal` sees them (undefined: the server reads no settings files). */
export function projectRulesFor(policy: ServerPolicy, principal: Principal, cwd: string): ProjectRules | undefined {
  const home = policy.settings?.home;
  if (!home) return undefined;
  const file = settingsPaths(cwd, home).local;
  const trusted = isFolderTrusted(home, cwd);
  const why = principal.role !== 'admin'
    ? 'A project rule applies to everyone’s runs in this folder, so only an admin may save one.'
    : !trusted
      ? `This folder is not trusted on the server's host, so its rules would not apply; trust it first: run \`${trustCommandFor(cwd)}\` on that host.`
      : undefined;
  return { cwd, file, trusted, allow: trusted ? allowRulesIn(file) : [], canSave: why === undefined, ...(why ? { why } : {}) };
}

/** The allow list of a settings file; a missing or unreadable file has none. */
function allowRulesIn(file: string): string[] {
  if (!existsSync(file)) return [];
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as { permissions?: { allow?: unknown } };
    const allow = json.permissions?.allow;
    return Array.isArray(allow) ? allow.filter((r): r is string => typeof r === 'string') : [];
  } catch {
    // The engine reports a broken settings file when a run starts; a list shows what it can.
    return [];
  }
}

/**
 * Refuses an "always, this project" answer (`remember: "local"`) the caller may not give, before the
 * answer is claimed, so nothing is stored and the run keeps waiting.
 */
export function assertProjectRuleAllowed(policy: ServerPolicy, principal: Principal, run: RunRecord, response: InteractionResponse): void {
  if (response.kind !== 'confirm' || !response.confirmed || response.remember !== 'local') return;
  const cwd = runCwd(run);
  const rules = cwd ? projectRulesFor(policy, principal, cwd) : undefined;
  if (!rules) throw new ConflictError('project_rules_off', 'This server reads no project settings files, so an answer cannot be saved for the project; answer for this run or for yourself.');
  if (principal.role !== 'admin') throw new PolicyForbiddenError(`${rules.why} Answer for this run or for yourself.`, { field: 'remember' });
  if (!rules.trusted) throw new ConflictError('folder_not_trusted', rules.why!);
}
