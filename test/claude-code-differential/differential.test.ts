import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecisionCache } from './case-types.js';
import { caseHash } from './case-hash.js';
import { DIFFERENTIAL_CASES } from './cases.js';
import { caseLine, compareWithCache, type Comparison } from './compare.js';
import { CACHE_FILE, pinnedClaudeCodeVersion } from './pinned-version.js';

const cache: DecisionCache | undefined = existsSync(CACHE_FILE) ? JSON.parse(readFileSync(CACHE_FILE, 'utf8')) : undefined;
let comparison: Comparison;

describe('differential: Sage against the real Claude Code (cached answers)', () => {
  beforeAll(async () => {
    comparison = await compareWithCache(DIFFERENTIAL_CASES, cache);
  }, 300_000);

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
    const { rows, unknown, agree, looser, stricter } = comparison;
    console.log([
      `differential: ${rows.length} cases, ${unknown.length} unknown (excluded), ${agree.length} agree, ${stricter.length} stricter, ${looser.length} looser`,
      ...(stricter.length ? ['stricter (allowed):', ...stricter.map(caseLine)] : []),
      ...(looser.length ? ['LOOSER:', ...looser.map(caseLine)] : []),
    ].join('\n'));
    expect(looser.map((r) => `${caseLine(r)} | ${JSON.stringify(r.c.input)} | Sage: ${r.sage.reason}`)).toEqual([]);
  });
});
