import type { GateToolInfo, RiskLevel } from './types.js';

/**
 * Tools that never change anything or send anything out. Not WebSearch or WebFetch: the query or
 * URL leaves the machine (a model led astray by a page it read can put a secret in a query), so
 * they are MEDIUM and left to rules or a person, as their tool definitions say (src/tool/builtin).
 * AskUserQuestion changes nothing either; it asks the person itself (requiresUserInteraction).
 */
const READ_ONLY = new Set(['Read', 'Glob', 'Grep', 'LS', 'NotebookRead', 'AskUserQuestion']);
const INTERACTIVE = new Set(['AskUserQuestion']);
const MEDIUM = new Set(['Bash', 'Edit', 'Write', 'WebFetch', 'WebSearch']);

/**
 * The known traits of the built-in tools, for callers (`sage permissions check`, tests) that
 * have only a tool name. Unknown tools are treated as neither read-only nor low risk.
 */
export function builtinToolInfo(name: string): GateToolInfo {
  const readOnly = READ_ONLY.has(name);
  const risk: RiskLevel = readOnly ? 'LOW' : MEDIUM.has(name) ? 'MEDIUM' : 'HIGH';
  return {
    name,
    readOnly,
    requiresUserInteraction: INTERACTIVE.has(name),
    risk: () => risk,
    permissionResource: (input) => {
      const i = (input ?? {}) as Record<string, unknown>;
      const value = i.command ?? i.file_path ?? i.path ?? i.pattern ?? i.url ?? i.query;
      return typeof value === 'string' ? value : undefined;
    },
    checkPermissions: () => ({ behavior: 'passthrough' }),
  };
}
