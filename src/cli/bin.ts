#!/usr/bin/env node
// The `sage` command's entry point. `--version` answers before anything heavy is loaded, so the
// most common probe of an installed CLI stays fast; everything else loads the program lazily.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const bundle = bundleFile();
  const { main } = bundle ? (await import('./load-bundle.js')).loadBundle(bundle, { sourceMaps: args.includes('--verbose') }) : ((await import('./main.js')) as typeof import('./main.js'));
  process.exitCode = await main(process.argv);
}

/**
 * The program as `npm run build` bundles it (main.js and what it loads, in ../cli-bundle/main.cjs,
 * by scripts/bundle-cli.mjs): one file, its compiled code cached between runs, instead of ~300
 * modules to resolve and load one by one. None, and then the modules themselves, when the bundle is
 * older than main.js (tsc ran without the bundle step: it would be stale), when this runs from src/,
 * or on a Node without require(esm) (before 20.19), which the bundle's ES-module-only packages
 * need. An installed package has the bundle: npm pack gives every file the same mtime, and the
 * same counts as fresh.
 */
function bundleFile(): string | undefined {
  if (!process.features.require_module) return undefined;
  const bundle = new URL('../cli-bundle/main.cjs', import.meta.url);
  try {
    if (statSync(bundle).mtimeMs >= statSync(new URL('./main.js', import.meta.url)).mtimeMs) return fileURLToPath(bundle);
  } catch {
    // no bundle (or, from src/, no main.js)
  }
  return undefined;
}
