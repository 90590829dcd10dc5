#!/usr/bin/env node
// The `sage` command's entry point. `--version` answers before anything heavy is loaded, so the
// most common probe of an installed CLI stays fast; everything else loads the program lazily.
import { readFileSync, statSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  // Stack traces (--verbose) then name the dist/ modules and lines, through the bundle's source maps.
  if (args.includes('--verbose')) process.setSourceMapsEnabled(true);
  const { main } = (await import(programUrl())) as typeof import('./main.js');
  process.exitCode = await main(process.argv);
}

/**
 * The program: `npm run build` bundles main.js and what it loads into ../cli-bundle/
 * (scripts/bundle-cli.mjs), a few dozen files to read instead of ~300 modules to resolve and load
 * one by one. A bundle older than main.js is stale (tsc ran without the bundle step), and there is
 * none when this runs from src/: then the modules themselves.
 */
function programUrl(): string {
  const bundle = new URL('../cli-bundle/main.js', import.meta.url);
  try {
    if (statSync(bundle).mtimeMs >= statSync(new URL('./main.js', import.meta.url)).mtimeMs) return bundle.href;
  } catch {
    // no bundle (or, from src/, no main.js): the modules
  }
  return './main.js';
}
