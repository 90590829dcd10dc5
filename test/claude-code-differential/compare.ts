import type { CcDecision, DecisionCache, DifferentialCase } from './case-types.js';
import { groupCases } from './case-hash.js';
import { sageDecisionsForGroup, type SageBehavior, type SageDecision } from './sage-decisions.js';

/** Sage is looser when it lets through what Claude Code stops, or asks where Claude Code refuses. */
export function isLooser(sage: SageBehavior, cc: CcDecision): boolean {
  return (sage === 'allow' && (cc === 'ask' || cc === 'deny')) || (sage === 'ask' && cc === 'deny');
}

export function isStricter(sage: SageBehavior, cc: CcDecision): boolean {
  return (sage === 'deny' && (cc === 'ask' || cc === 'allow')) || (sage === 'ask' && cc === 'allow');
}

export interface ComparedCase {
  c: DifferentialCase;
  cc: CcDecision;
  sage: SageDecision;
}

export interface Comparison {
  rows: ComparedCase[];
  unknown: ComparedCase[];
  agree: ComparedCase[];
  looser: ComparedCase[];
  stricter: ComparedCase[];
}

export async function compareWithCache(cases: readonly DifferentialCase[], cache: DecisionCache | undefined): Promise<Comparison> {
  const sage = new Map<string, SageDecision>();
  for (const group of groupCases(cases)) {
    for (const [id, decision] of await sageDecisionsForGroup(group)) sage.set(id, decision);
  }
  const rows = cases.map((c) => ({ c, cc: cache?.cases[c.id]?.decision ?? 'unknown', sage: sage.get(c.id)! }));
  const known = rows.filter((r) => r.cc !== 'unknown');
  return {
    rows,
    unknown: rows.filter((r) => r.cc === 'unknown'),
    agree: known.filter((r) => r.cc === r.sage.behavior),
    looser: known.filter((r) => isLooser(r.sage.behavior, r.cc)),
    stricter: known.filter((r) => isStricter(r.sage.behavior, r.cc)),
  };
}

/** One line of the printed tables. */
export function caseLine(r: ComparedCase): string {
  return `${r.c.id.padEnd(34)} ${r.c.tool.padEnd(8)} CC ${r.cc.padEnd(5)} Sage ${r.sage.behavior.padEnd(5)} ${r.c.note}`;
}

/** The call as a person would read it. */
export function callText(c: DifferentialCase): string {
  if (c.tool === 'Bash' && typeof c.input.command === 'string') return `Bash: ${c.input.command}`;
  const target = c.input.file_path ?? c.input.notebook_path ?? c.input.path ?? c.input.url;
  if (c.tool === 'Glob' || c.tool === 'Grep') return `${c.tool} ${String(c.input.pattern)}${target ? ` in ${String(target)}` : ''}`;
  return target ? `${c.tool} ${String(target)}` : `${c.tool} ${JSON.stringify(c.input)}`;
}
