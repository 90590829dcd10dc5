import type { GateToolInfo, RiskLevel } from './types.js';

const READ_ONLY = new Set(['Read', 'Glob', 'Grep', 'LS', 'NotebookRead', 'WebSearch']);
const INTERACTIVE = new Set(['AskUserQuestion']);

/**
 * The known traits of the built-in tools, for callers (`sage permissions check`, tests) that
 * have only a tool name. Unknown tools are treated as neither read-only nor low risk.
 */
export function builtinToolInfo(name: string): GateToolInfo {
  const readOnly = READ_ONLY.has(name);
  const risk: RiskLevel = readOnly ? 'LOW' : INTERACTIVE.has(name) ? 'LOW' : name === 'Bash' ? 'MEDIUM' : name === 'Edit' || name === 'Write' ? 'MEDIUM' : 'HIGH';
  return {
    name,
    readOnly,
    requiresUserInteraction: INTERACTIVE.has(name),
    risk: () => risk,
    permissionResource: (input) => {
      const i = (input ?? {}) as Record<string, unknown>;
      const value = i.command ?? i.file_path ?? i.path ?? i.pattern ?? i.url;
      return typeof value === 'string' ? value : undefined;
    },
    checkPermissions: () => ({ behavior: 'passthrough' }),
  };
}
