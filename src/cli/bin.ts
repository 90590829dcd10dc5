#!/usr/bin/env node
// The `sage` command's entry point. `--version` answers before anything heavy is loaded, so the
// most common probe of an installed CLI stays fast; everything else loads the program lazily.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import('./main.js');
  process.exitCode = await main(process.argv);
}
