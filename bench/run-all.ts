/**
 * Runs every benchmark in bench/ (each `bench/*.ts` except this file), one process each, in
 * sequence, passing their output through. A benchmark that fails does not stop the others; the
 * exit code is non-zero at the end if any failed. At the end, one table of every goal the
 * benchmarks reported (their BENCH_RESULT `goals`, else their printed "goal … met/MISSED" lines)
 * and whether it was met on this run, with the load average.
 *
 *   npm run bench                 # all of them
 *   npm run bench -- loop grep    # only those whose file name contains one of the words
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const self = basename(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));

const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && f !== self)
  .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)))
  .sort();

if (files.length === 0) {
  console.error(filters.length ? `No benchmark in bench/ matches ${filters.join(', ')}.` : 'No benchmark in bench/.');
  process.exit(1);
}

/** A goal a benchmark reported: from its BENCH_RESULT line, or a printed "goal … met / MISSED" line. */
interface GoalLine {
  file: string;
  goal: string;
  met: boolean | undefined;
}
const goals: GoalLine[] = [];

/** Reads a benchmark's goals from what it printed (each benchmark says them in its own words). */
function collectGoals(file: string, output: string): void {
  // A benchmark whose BENCH_RESULT lists its goals is summarised from that alone (its printed lines say the same).
  const structured = output.split('\n').some((l) => l.startsWith('BENCH_RESULT ') && l.includes('"goals"'));
  for (const line of output.split('\n')) {
    if (structured && !line.startsWith('BENCH_RESULT ')) continue;
    if (line.startsWith('BENCH_RESULT ')) {
      try {
        const result = JSON.parse(line.slice('BENCH_RESULT '.length)) as { goals?: Array<{ goal: string; value?: number; met?: boolean }>; goal?: unknown; met?: boolean; goalMs?: number };
        for (const g of result.goals ?? []) goals.push({ file, goal: `${g.goal}${g.value !== undefined ? ` (${Number(g.value).toFixed(2)})` : ''}`, met: g.met });
        if (!result.goals && result.met !== undefined) goals.push({ file, goal: typeof result.goal === 'string' ? result.goal : JSON.stringify(result.goal ?? result.goalMs ?? ''), met: result.met });
      } catch {
        // a malformed line is shown as printed above; nothing to summarise
      }
      continue;
    }
    const text = line.trim();
    if (/\bgoal\b/i.test(text) && /\b(met|MET|MISSED|NOT met|NOT MET)\b/.test(text)) {
      goals.push({ file, goal: text.replace(/^goal:\s*/i, ''), met: !/MISSED|NOT met|NOT MET/.test(text) });
    }
  }
}

function runOne(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, file)], { cwd: join(here, '..'), stdio: ['inherit', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      console.error(`bench/${file}: could not start: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code, signal) => {
      collectGoals(file, output);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const results: { file: string; code: number; seconds: number }[] = [];
for (const file of files) {
  console.log(`\n=== bench/${file} ===\n`);
  const started = Date.now();
  const code = await runOne(file);
  results.push({ file, code, seconds: (Date.now() - started) / 1000 });
  if (code !== 0) console.log(`\nbench/${file} exited with ${code}`);
}

console.log('\n=== summary ===');
for (const r of results) console.log(`${r.code === 0 ? 'ok    ' : 'FAILED'} bench/${r.file} (${r.seconds.toFixed(1)} s)${r.code === 0 ? '' : `, exit ${r.code}`}`);
if (goals.length > 0) {
  console.log(`\n=== goals (load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')}; the machine is shared: read medians and ratios) ===`);
  console.log('| bench | goal (as the benchmark printed it) | met on this run |');
  console.log('|---|---|---|');
  for (const g of goals) console.log(`| ${g.file} | ${g.goal.replaceAll('|', '/')} | ${g.met === undefined ? '?' : g.met ? 'yes' : 'NO'} |`);
}
const failed = results.filter((r) => r.code !== 0);
if (failed.length > 0) {
  console.log(`${failed.length} of ${results.length} benchmark(s) failed.`);
  process.exitCode = 1;
}
