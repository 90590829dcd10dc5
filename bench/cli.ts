/**
 * Cold start of the `sage` command, whole process, beside Claude Code's and Gemini CLI's
 * `--version` in the same run. Peers: `npm install --prefix bench/peers-cli` (not a dependency of Sage).
 * Also `sage run` of one scripted turn (issue 13, goal 4: ≤ 2× `sage --version`), in a scratch folder
 * with its own store and an empty home, so no settings, MCP servers or earlier runs of yours count.
 *
 *   npx tsx bench/cli.ts [--runs 20]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadavg, tmpdir } from 'node:os';
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
const home = join(scriptDir, 'home');
mkdirSync(home);

interface Case {
  name: string;
  argv: string[];
  /** A native executable rather than a script for node. */
  command?: string;
}

const cases: Case[] = [
  { name: 'node -e 0 (the floor: Node itself)', argv: ['-e', '0'] },
  { name: 'sage --version', argv: [sageBin, '--version'] },
  // The default store (.sage/sage.db of the scratch folder, SQLite at FULL), as a person's run has.
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
  const result = spawnSync(command, argv, { cwd: scriptDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: '1', NO_COLOR: '1', HOME: home, SAGE_HOME: home, XDG_CACHE_HOME: join(home, '.cache') } });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr.toString().slice(0, 300)}`);
  return ms;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const times = new Map<Case, number[]>(cases.map((c) => [c, []]));
// Warms the file system cache, and fills sage's code cache (~/.cache/sage of the empty home, see
// src/cli/bin.ts) as a person's first run does for every later one; every timed run is still
// a fresh process.
for (const c of cases) timeOnce(c.argv, c.command);
// Round robin (every command once, then again): on this shared machine a change of load then falls
// on every command alike, which matters for the ratio of two of them.
for (let i = 0; i < RUNS; i++) for (const c of cases) times.get(c)!.push(timeOnce(c.argv, c.command));
const rows = cases.map((c) => {
  const sorted = times.get(c)!.sort((a, b) => a - b);
  return { name: c.name, median: quantile(sorted, 0.5), min: sorted[0]!, max: sorted.at(-1)! };
});

// What the run loads, counted rather than timed (the same on a busy machine): one more run with
// hooks that note every file of JavaScript it compiles: ES modules (a module-loader hook), CommonJS
// files (Module.prototype._compile) and scripts compiled with node:vm (the bundled program, which
// src/cli/bin.ts compiles from V8's code cache when there is one). Node's own modules aside.
const loadedList = join(scriptDir, 'loaded.txt');
const hooks = join(scriptDir, 'count-hooks.mjs');
writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { if (url.startsWith('file:')) appendFileSync(${JSON.stringify(loadedList)}, url + '\\n'); return next(url, context); }\n`);
const counter = join(scriptDir, 'count.cjs');
writeFileSync(
  counter,
  `const { appendFileSync } = require('node:fs');
const Module = require('node:module');
const vm = require('node:vm');
const { pathToFileURL } = require('node:url');
const note = (file) => appendFileSync(${JSON.stringify(loadedList)}, pathToFileURL(file).href + '\\n');
Module.register(${JSON.stringify(pathToFileURL(hooks).href)});
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) { note(filename); return compile.call(this, content, filename); };
const Script = vm.Script;
vm.Script = class extends Script { constructor(code, options) { super(code, options); if (options && options.filename) note(options.filename); } };
`,
);
timeOnce(['--require', counter, ...cases[2]!.argv]);
const loadedFiles = [...new Set(readFileSync(loadedList, 'utf8').trim().split('\n'))];
const loaded = { files: loadedFiles.length, kb: loadedFiles.reduce((sum, u) => sum + statSync(fileURLToPath(u)).size, 0) / 1024 };
rmSync(scriptDir, { recursive: true, force: true });

const base = rows[1]!.median;
console.log(`CLI cold start — node ${process.version}, ${RUNS} runs each, round robin, whole process (spawn to exit); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
console.log('| command | median ms | min–max ms | vs sage --version |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${r.median.toFixed(1)} | ${r.min.toFixed(1)}–${r.max.toFixed(1)} | ${(r.median / base).toFixed(2)}x |`);
const version = rows[1]!;
const run = rows[2]!;
const peerRows = rows.slice(3);
const versionMet = version.median <= 80 && peerRows.every((p) => version.median < p.median);
const runRatio = run.median / version.median;
console.log(`\nsage run of one scripted turn: ${run.median.toFixed(1)} ms = ${runRatio.toFixed(2)}x sage --version (${version.median.toFixed(1)} ms); Node itself: ${rows[0]!.median.toFixed(1)} ms.`);
console.log(`It loads ${loaded.files} files of JavaScript, ${loaded.kb.toFixed(0)} KB (besides Node's own modules).`);
console.log(`goal: sage --version <= 80 ms${peerRows.length ? ' and faster than the peers' : ''}: ${versionMet ? 'met' : 'MISSED'}`);
console.log(`goal: sage run (one scripted turn) <= 2x sage --version: ${runRatio <= 2 ? 'met' : 'MISSED'}`);
console.log(
  `BENCH_RESULT ${JSON.stringify({
    bench: 'cli',
    load: loadavg(),
    runs: RUNS,
    medianMs: Object.fromEntries(rows.map((r) => [r.name, r.median])),
    runToVersion: runRatio,
    runLoads: loaded,
    goals: [
      { goal: `sage --version ≤ 80 ms${peerRows.length ? ' and faster than the peers' : ''} (value = ms)`, value: version.median, met: versionMet },
      { goal: 'sage run of one scripted turn ≤ 2× sage --version (value = the ratio)', value: runRatio, met: runRatio <= 2 },
    ],
  })}`,
);
