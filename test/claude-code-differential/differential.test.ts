import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CcDecision, DecisionCache } from './case-types.js';
import { caseHash, groupCases } from './case-hash.js';
import { DIFFERENTIAL_CASES } from './cases.js';
import { CACHE_FILE, pinnedClaudeCodeVersion } from './pinned-version.js';
import { sageDecisionsForGroup, type SageBehavior, type SageDecision } from './sage-decisions.js';

/** Sage is looser when it lets through what Claude Code stops, or asks where Claude Code refuses. */
export function isLooser(sage: SageBehavior, cc: CcDecision): boolean {
  return (sage === 'allow' && (cc === 'ask' || cc === 'deny')) || (sage === 'ask' && cc === 'deny');
}

export function isStricter(sage: SageBehavior, cc: CcDecision): boolean {
  return (sage === 'deny' && (cc === 'ask' || cc === 'allow')) || (sage === 'ask' && cc === 'allow');
}

const cache: DecisionCache | undefined = existsSync(CACHE_FILE) ? JSON.parse(readFileSync(CACHE_FILE, 'utf8')) : undefined;
const sage = new Map<string, SageDecision>();

describe('differential: Sage against the real Claude Code (cached answers)', () => {
  beforeAll(async () => {
    for (const group of groupCases(DIFFERENTIAL_CASES)) {
      for (const [id, decision] of await sageDecisionsForGroup(group)) sage.set(id, decision);
    }
  }, 120_000);

  it('has at least 300 cases over Bash, Read, Edit, Write, Glob and Grep in all five modes', () => {
    expect(DIFFERENTIAL_CASES.length).toBeGreaterThanOrEqual(300);
    expect(new Set(DIFFERENTIAL_CASES.map((c) => c.id)).size).toBe(DIFFERENTIAL_CASES.length);
    const tools = new Set(DIFFERENTIAL_CASES.map((c) => c.tool));
    for (const tool of ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep']) expect(tools).toContain(tool);
    expect(new Set(DIFFERENTIAL_CASES.map((c) => c.mode))).toEqual(new Set(['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions']));
  });

  it('uses answers recorded with the pinned Claude Code, for exactly the current cases', () => {
    expect(cache, `${CACHE_FILE} is missing: run npm run differential:refresh`).toBeDefined();
    expect(cache!.claudeCodeVersion, 'the cache was made with another Claude Code than package.json pins: run npm run differential:refresh').toBe(pinnedClaudeCodeVersion());
    const stale = DIFFERENTIAL_CASES.filter((c) => cache!.cases[c.id]?.caseHash !== caseHash(c)).map((c) => c.id);
    expect(stale, 'cases added or changed since the last refresh: run npm run differential:refresh').toEqual([]);
  });

  it('Sage is never looser than Claude Code (stricter is allowed and listed)', () => {
    const rows = DIFFERENTIAL_CASES.map((c) => ({ c, cc: cache?.cases[c.id]?.decision ?? 'unknown', sage: sage.get(c.id)! }));
    const known = rows.filter((r) => r.cc !== 'unknown');
    const looser = known.filter((r) => isLooser(r.sage.behavior, r.cc));
    const stricter = known.filter((r) => isStricter(r.sage.behavior, r.cc));
    const line = (r: (typeof rows)[number]) => `${r.c.id.padEnd(34)} ${r.c.tool.padEnd(8)} CC ${r.cc.padEnd(5)} Sage ${r.sage.behavior.padEnd(5)} ${r.c.note}`;
    console.log([
      `differential: ${rows.length} cases, ${rows.length - known.length} unknown (excluded), ${known.length - looser.length - stricter.length} agree, ${stricter.length} stricter, ${looser.length} looser`,
      ...(stricter.length ? ['stricter (allowed):', ...stricter.map(line)] : []),
      ...(looser.length ? ['LOOSER:', ...looser.map(line)] : []),
    ].join('\n'));
    expect(looser.map((r) => `${line(r)} | ${JSON.stringify(r.c.input)} | Sage: ${r.sage.reason}`)).toEqual([]);
  });
});
