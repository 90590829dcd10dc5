#!/usr/bin/env node
/* global process, console */
// After a version bump in test/agents/pinned.json: installs the pinned versions, runs the real-program
// suites with SAGE_RECORD_OBSERVED set (each writes test/agents/observed/<program>.json: the model-API
// requests the program made and the calls Sage recorded, per behaviour), and prints what changed against
// the files as they were before. Commit the new files with the bump. Usage: npm run agents:refresh [suite…]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const observedDir = join(root, 'test', 'agents', 'observed');
// The suites that drive the pinned programs (Codex's is its own engineer's: added here once it records).
const SUITES = ['src/agents/acp/gemini-cli.real.test.ts', 'src/agents/acp/qwen-code.real.test.ts', 'src/mcp/reference-servers.real.test.ts'];

const readObserved = () => {
  const files = existsSync(observedDir) ? readdirSync(observedDir).filter((f) => f.endsWith('.json')) : [];
  return Object.fromEntries(files.map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(join(observedDir, f), 'utf8'))]));
};

const before = readObserved();
execFileSync(process.execPath, [join(root, 'scripts', 'agents-install.mjs')], { stdio: 'inherit' });
const suites = process.argv.slice(2).length ? process.argv.slice(2) : SUITES;
// CI set: a program that did not install fails its suite instead of skipping it.
const run = spawnSync('npx', ['vitest', 'run', ...suites], { cwd: root, stdio: 'inherit', env: { ...process.env, SAGE_RECORD_OBSERVED: '1', CI: '1' } });
const after = readObserved();

/** Lines of a list that were removed (-) and added (+), in order, as a multiset. */
function listDiff(old = [], now = []) {
  const left = [...old];
  const added = [];
  for (const line of now) {
    const at = left.indexOf(line);
    if (at >= 0) left.splice(at, 1);
    else added.push(line);
  }
  return [...left.map((l) => `- ${l}`), ...added.map((l) => `+ ${l}`)];
}

let changed = 0;
for (const program of Object.keys({ ...before, ...after }).sort()) {
  const was = before[program];
  const now = after[program];
  if (!now) continue;
  const lines = [];
  for (const behaviour of Object.keys({ ...was?.behaviours, ...now.behaviours }).sort()) {
    const a = was?.behaviours?.[behaviour] ?? {};
    const b = now.behaviours[behaviour] ?? {};
    for (const key of Object.keys({ ...a, ...b }).sort()) {
      const diff = listDiff(a[key], b[key]);
      if (diff.length) lines.push(`  ${behaviour} / ${key}:`, ...diff.map((d) => `    ${d}`));
    }
  }
  const version = was && was.version !== now.version ? ` ${was.version} → ${now.version}` : ` ${now.version}`;
  console.log(`\n${program}${version}: ${lines.length ? 'changed' : 'nothing changed in what it did'}`);
  for (const line of lines) console.log(line);
  if (lines.length) changed++;
}
console.log(`\nagents:refresh: suites ${run.status === 0 ? 'passed' : 'FAILED'}; ${changed} program(s) behaved differently (see git diff test/agents/observed).`);
process.exit(run.status ?? 1);
