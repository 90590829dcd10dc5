/**
 * Regenerates claude-code-decisions.json: runs every differential case through the real Claude
 * Code (the pinned devDependency, offline, see claude-driver.ts) and records its decision.
 *
 *   npm run differential:refresh                 # every case
 *   npm run differential:refresh -- --only shell,real   # only cases whose id starts with "shell" or "real" (merged into the cache)
 *   DIFFERENTIAL_JOBS=1 npm run differential:refresh
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { DecisionCache, DifferentialCase } from './case-types.js';
import { caseHash, groupCases } from './case-hash.js';
import { DIFFERENTIAL_CASES } from './cases.js';
import { claudeBinary, runGroupInClaudeCode } from './claude-driver.js';
import { CACHE_FILE, REPO_ROOT, pinnedClaudeCodeVersion } from './pinned-version.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',').filter(Boolean) : undefined;
  const jobs = Math.max(1, Number(process.env.DIFFERENTIAL_JOBS ?? 2) || 2);
  const bin = claudeBinary(REPO_ROOT);
  const version = /^(\S+)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim())?.[1] ?? '';
  const pinned = pinnedClaudeCodeVersion();
  if (version !== pinned) throw new Error(`Claude Code at ${bin} is ${version}, package.json pins ${pinned}: run npm ci first.`);

  const selected = DIFFERENTIAL_CASES.filter((c) => only === undefined || only.some((prefix) => c.id.startsWith(prefix)));
  const previous: DecisionCache | undefined = only !== undefined && existsSync(CACHE_FILE) ? JSON.parse(readFileSync(CACHE_FILE, 'utf8')) : undefined;
  const cache: DecisionCache = { claudeCodeVersion: version, cases: previous?.claudeCodeVersion === version ? { ...previous.cases } : {} };
  const groups = groupCases(selected);
  const started = Date.now();
  let done = 0;
  const queue = [...groups];
  const worker = async () => {
    for (let group = queue.shift(); group; group = queue.shift()) {
      const decisions = await runGroupInClaudeCode(group, bin);
      for (const c of group) {
        const d = decisions.get(c.id) ?? { decision: 'unknown' as const, evidence: 'not run' };
        cache.cases[c.id] = { decision: d.decision, evidence: d.evidence, caseHash: caseHash(c) };
      }
      done += group.length;
      process.stderr.write(`\r${done}/${selected.length} cases`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, groups.length) }, worker));
  process.stderr.write('\n');

  // Keep only live cases, in case order, so the file diffs cleanly.
  const ordered: DecisionCache['cases'] = {};
  for (const c of DIFFERENTIAL_CASES) if (cache.cases[c.id]) ordered[c.id] = cache.cases[c.id]!;
  writeFileSync(CACHE_FILE, `${JSON.stringify({ claudeCodeVersion: version, cases: ordered }, null, 1)}\n`);
  const counts = countBy(selected, (c) => ordered[c.id]!.decision);
  console.log(`Claude Code ${version}: ${selected.length} cases in ${groups.length} processes, ${((Date.now() - started) / 1000).toFixed(1)} s; ${JSON.stringify(counts)}`);
}

function countBy(cases: readonly DifferentialCase[], key: (c: DifferentialCase) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of cases) counts[key(c)] = (counts[key(c)] ?? 0) + 1;
  return counts;
}

main().catch((error: unknown) => {
  console.error(`differential refresh failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
