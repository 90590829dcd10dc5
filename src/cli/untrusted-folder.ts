import { isObject, readObject, trustSummary } from './trust-summary.js';

/** Keys of a folder's own settings that wait for trust besides allow rules, hooks and MCP servers. */
const GATED_KEYS = [
  'defaultMode', 'additionalDirectories', 'approval', 'model', 'agents', 'chain', 'webFetch', 'webSearch',
] as const;

/**
 * What a folder's own files would turn on once trusted, in a few words each ("2 allow rules",
 * "hooks (PreToolUse)", "MCP servers (github)", "1 skill"): what a run there ignores until then.
 * Empty when trusting it would change nothing (no files, or only deny and ask rules).
 */
export function ignoredUntilTrusted(folder: string): string[] {
  const summary = trustSummary(folder);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (summary.allowRules > 0) parts.push(plural(summary.allowRules, 'allow rule'));
  if (summary.hooks.length) parts.push(`hooks (${summary.hooks.join(', ')})`);
  const servers = [...new Set(summary.mcpServers.map((s) => s.name))];
  if (servers.length) parts.push(`MCP servers (${servers.join(', ')})`);
  if (summary.agents.length) parts.push(plural(summary.agents.length, 'agent'));
  if (summary.skills.length) parts.push(plural(summary.skills.length, 'skill'));
  const keys = new Set<string>();
  for (const file of summary.settingsFiles) {
    const json = readObject(file);
    const permissions = json?.['permissions'];
    for (const key of GATED_KEYS) {
      const inPermissions = key === 'defaultMode' || key === 'additionalDirectories';
      const holder = inPermissions ? (isObject(permissions) ? permissions : undefined) : json;
      if (holder?.[key] !== undefined) keys.add(key);
    }
  }
  if (keys.size) parts.push(`settings ${[...keys].join(', ')}`);
  return parts;
}
