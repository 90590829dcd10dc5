#!/usr/bin/env node
// The `sage` command's entry point. `--version` answers before anything heavy is loaded, so the
// most common probe of an installed CLI stays fast; everything else loads the program lazily.
import { readFileSync, statSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const bundle = bundleUrl();
  // --verbose shows stack traces: through the bundle's source maps they name the dist/ modules and
  // lines, as they did before the bundle. (Not for the modules themselves: their maps lead to src/.)
  if (bundle && args.includes('--verbose')) process.setSourceMapsEnabled(true);
  const { main } = (await import(bundle ?? './main.js')) as typeof import('./main.js');
  process.exitCode = await main(process.argv);
}

/**
 * The program as `npm run build` bundles it (main.js and what it loads, in ../cli-bundle/, by
 * scripts/bundle-cli.mjs): a few dozen files to read instead of ~300 modules to resolve and load one
 * by one. None when the bundle is older than main.js (tsc ran without the bundle step: it would be
 * stale) or when this runs from src/: then the modules themselves. An installed package has the
 * bundle: npm pack gives every file the same mtime, and the same counts as fresh.
 */
function bundleUrl(): string | undefined {
  const bundle = new URL('../cli-bundle/main.js', import.meta.url);
  try {
    if (statSync(bundle).mtimeMs >= statSync(new URL('./main.js', import.meta.url)).mtimeMs) return bundle.href;
  } catch {
    // no bundle (or, from src/, no main.js)
  }
  return undefined;
}
