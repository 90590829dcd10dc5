/**
 * Runs every benchmark in bench/ (each `bench/*.ts` except this file), one process each, in
 * sequence, passing their output through. A benchmark that fails does not stop the others; the
 * exit code is non-zero at the end if any failed.
 *
 *   npm run bench                 # all of them
 *   npm run bench -- loop grep    # only those whose file name contains one of the words
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
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

function runOne(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, file)], { cwd: join(here, '..'), stdio: 'inherit' });
    child.on('error', (error) => {
      console.error(`bench/${file}: could not start: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
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
const failed = results.filter((r) => r.code !== 0);
if (failed.length > 0) {
  console.log(`${failed.length} of ${results.length} benchmark(s) failed.`);
  process.exitCode = 1;
}
