import { createHash } from 'node:crypto';
import type { DifferentialCase } from './case-types.js';

/** What decides a case's outcome (not its note): an edited case no longer matches its cached answer. */
export function caseHash(c: DifferentialCase): string {
  const { settings, mode, files, mcp, tool, input } = c;
  return createHash('sha256').update(JSON.stringify({ settings, mode, files: files ?? [], ...(mcp ? { mcp } : {}), tool, input })).digest('hex').slice(0, 16);
}

/** Cases that share settings, mode and files run in one Claude Code process and one scratch tree. */
export function groupKey(c: DifferentialCase): string {
  return JSON.stringify({ settings: c.settings, mode: c.mode, files: c.files ?? [], mcp: c.mcp === true });
}

export function groupCases(cases: readonly DifferentialCase[]): DifferentialCase[][] {
  const groups = new Map<string, DifferentialCase[]>();
  for (const c of cases) {
    const key = groupKey(c);
    const list = groups.get(key) ?? [];
    list.push(c);
    groups.set(key, list);
  }
  return [...groups.values()];
}
