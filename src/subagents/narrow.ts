import { isAbsolute, relative, resolve } from 'node:path';
import type { SubagentDefinition, SubagentPermissionMode } from './definition.js';

/** The tools that start subagents; never handed to a subagent unless nesting is on. */
export const TASK_TOOL = 'Task';

/**
 * Modes from the strictest: plan (read-only calls only), dontAsk (what would ask is denied),
 * default, acceptEdits, bypassPermissions. A subagent gets the stricter of its own and its parent's.
 */
const STRICTNESS: readonly SubagentPermissionMode[] = ['plan', 'dontAsk', 'default', 'acceptEdits', 'bypassPermissions'];

export function stricterMode(parent: SubagentPermissionMode | undefined, own: SubagentPermissionMode | undefined): SubagentPermissionMode | undefined {
  if (own === undefined) return parent;
  const p = STRICTNESS.indexOf(parent ?? 'default');
  return STRICTNESS.indexOf(own) < p ? own : (parent ?? 'default');
}

/**
 * A subagent's tools: its definition's (a name or a `Tool(...)` entry names the tool) cut down to the
 * parent's, never more; without a list, the parent's. `Task` only while nesting is allowed.
 */
export function childTools(definition: SubagentDefinition, parentTools: readonly string[], nesting: boolean): string[] {
  const wanted = definition.tools ? new Set(definition.tools.map((t) => t.replace(/\(.*$/, '').trim())) : undefined;
  return parentTools.filter((name) => (wanted ? wanted.has(name) : true) && (name !== TASK_TOOL || nesting));
}

/**
 * Where the subagent works: the parent's folder unless its definition says otherwise; an explicit
 * folder (relative to the parent's) or the process's cwd only when inside one of the parent's
 * folders. Returns a reason instead when it is not.
 */
export function childCwd(definition: SubagentDefinition, parentCwd: string, additionalDirectories: readonly string[], processCwd = process.cwd()): { cwd: string } | { error: string } {
  const wd = definition.workingDirectory;
  if (wd.kind === 'inherited') return { cwd: parentCwd };
  const wanted = wd.kind === 'process' ? resolve(processCwd) : resolve(parentCwd, wd.path);
  const roots = [parentCwd, ...additionalDirectories].map((r) => resolve(parentCwd, r));
  if (roots.some((root) => isInside(root, wanted))) return { cwd: wanted };
  return { error: `its working directory ${wanted} is outside the folders of the run that starts it (${roots.join(', ')}); a subagent may only narrow where it works` };
}

export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
