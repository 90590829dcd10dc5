/**
 * Cold start of the `sage` command, whole process, beside Claude Code's and Gemini CLI's
 * `--version` in the same run. Peers: `npm install --prefix bench/peers-cli` (not a dependency of Sage).
 *
 *   npx tsx bench/cli.ts [--runs 20]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 20;
const sageBin = join(root, 'dist/cli/bin.js');
const peers = join(root, 'bench/peers-cli/node_modules');

if (!existsSync(sageBin)) {
  console.error('Build first: npm run build');
  process.exit(1);
}

const scriptDir = mkdtempSync(join(tmpdir(), 'sage-bench-cli-'));
const script = join(scriptDir, 'one-turn.json');
writeFileSync(script, JSON.stringify({ turns: [{ text: 'Hello from a one-turn scripted task.' }] }));

interface Case {
  name: string;
  argv: string[];
  /** A native executable rather than a script for node. */
  command?: string;
}

const cases: Case[] = [
  { name: 'node -e 0 (the floor: Node itself)', argv: ['-e', '0'] },
  { name: 'sage --version', argv: [sageBin, '--version'] },
  { name: 'sage run (one scripted turn)', argv: [sageBin, 'run', 'hello', '--model', `scripted:${script}`, '--batch', '--json'] },
];
// Claude Code 2.x ships a native executable (from its platform package); Gemini CLI a JS bundle.
const claude = join(peers, '@anthropic-ai/claude-code/bin/claude.exe');
const gemini = join(peers, '@google/gemini-cli/bundle/gemini.js');
if (existsSync(claude)) cases.push({ name: 'claude --version', command: claude, argv: ['--version'] });
if (existsSync(gemini)) cases.push({ name: 'gemini --version', argv: [gemini, '--version'] });
if (cases.length === 3) console.log('Peers not installed: npm install --prefix bench/peers-cli (then run again to compare).\n');

function timeOnce(argv: string[], command = process.execPath): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: '1', NO_COLOR: '1' } });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr.toString().slice(0, 300)}`);
  return ms;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const rows: Array<{ name: string; median: number; min: number; max: number }> = [];
for (const c of cases) {
  timeOnce(c.argv, c.command); // warm the file system cache; every timed run is still a fresh process
  const times: number[] = [];
  // Interleaving would be fairer on a noisy box, but each case's runs back to back keep the page cache equal for all.
  for (let i = 0; i < RUNS; i++) times.push(timeOnce(c.argv, c.command));
  times.sort((a, b) => a - b);
  rows.push({ name: c.name, median: quantile(times, 0.5), min: times[0]!, max: times.at(-1)! });
}

const base = rows[1]!.median;
console.log(`CLI cold start — node ${process.version}, ${RUNS} runs each, whole process (spawn to exit)\n`);
console.log('| command | median ms | min–max ms | vs sage --version |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${r.median.toFixed(1)} | ${r.min.toFixed(1)}–${r.max.toFixed(1)} | ${(r.median / base).toFixed(2)}x |`);
console.log('\nGoal: sage --version <= 80 ms and faster than both peers.');
