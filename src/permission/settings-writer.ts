import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SettingsFileError } from './errors.js';

/**
 * Rewrites a JSON settings file atomically (write a temporary file beside it, then rename), keeping
 * every key the change does not touch. A file that is not valid JSON is never overwritten.
 */
export function updateJsonFile(file: string, mutate: (json: Record<string, unknown>) => void): void {
  let json: Record<string, unknown> = {};
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8');
    try {
      const parsed: unknown = text.trim().length ? JSON.parse(text) : {};
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the top level is not an object');
      json = parsed as Record<string, unknown>;
    } catch (cause) {
      throw new SettingsFileError(file, '(root)', `not valid JSON, so it was not rewritten (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    }
  }
  mutate(json);
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, `${JSON.stringify(json, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

type RuleList = 'allow' | 'ask' | 'deny';

function permissionsOf(json: Record<string, unknown>): Record<string, unknown> {
  const current = json.permissions;
  if (current !== undefined && (current === null || typeof current !== 'object' || Array.isArray(current))) {
    throw new Error('"permissions" is not an object');
  }
  const permissions = (current ?? {}) as Record<string, unknown>;
  json.permissions = permissions;
  return permissions;
}

/** Adds a rule to `permissions.<list>` (once); other keys and lists are kept as they are. */
export function addRuleToSettingsFile(file: string, list: RuleList, rule: string): void {
  ensureLocalIgnored(file);
  updateJsonFile(file, (json) => {
    const permissions = permissionsOf(json);
    const rules = Array.isArray(permissions[list]) ? (permissions[list] as unknown[]) : [];
    if (!rules.includes(rule)) rules.push(rule);
    permissions[list] = rules;
  });
}

/** Removes a rule from every list of the file; returns whether it was there. */
export function removeRuleFromSettingsFile(file: string, rule: string): boolean {
  if (!existsSync(file)) return false;
  let removed = false;
  updateJsonFile(file, (json) => {
    const permissions = permissionsOf(json);
    for (const list of ['allow', 'ask', 'deny'] as const) {
      const rules = permissions[list];
      if (!Array.isArray(rules)) continue;
      const kept = rules.filter((r) => r !== rule);
      if (kept.length !== rules.length) removed = true;
      permissions[list] = kept;
    }
  });
  return removed;
}

/** The local settings file is personal: when Sage creates it, it is git-ignored. */
function ensureLocalIgnored(file: string): void {
  if (path.basename(file) !== 'settings.local.json' || existsSync(file)) return;
  const ignore = path.join(path.dirname(file), '.gitignore');
  const current = existsSync(ignore) ? readFileSync(ignore, 'utf8') : '';
  if (current.split(/\r?\n/).includes('settings.local.json')) return;
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(ignore, `${current}${current && !current.endsWith('\n') ? '\n' : ''}settings.local.json\n`);
}
