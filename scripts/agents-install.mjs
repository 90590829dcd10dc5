#!/usr/bin/env node
/* global process, console */
// Installs the real agent programs the agent suites run (test/agents/pinned.json) into a cache folder
// outside node_modules: Codex alone is ~420 MB, far too much for Sage's own dependencies.
// Each program gets its own prefix named by package and version, so a version bump installs beside the
// old one and a finished install is never redone. Usage: node scripts/agents-install.mjs [name…]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentsCacheRoot, programPrefix } from './agents-cache.mjs';

const manifestPath = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'agents', 'pinned.json');
const { programs } = JSON.parse(readFileSync(manifestPath, 'utf8'));
const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!(name in programs)) {
    console.error(`agents:install: unknown program "${name}"; known: ${Object.keys(programs).join(', ')}`);
    process.exit(2);
  }
}

const root = agentsCacheRoot();
mkdirSync(root, { recursive: true });
let failed = 0;
for (const [name, program] of Object.entries(programs)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const prefix = programPrefix(program);
  const done = join(prefix, '.installed');
  if (existsSync(done)) {
    console.log(`${name}: ${program.package}@${program.version} already in ${prefix}`);
    continue;
  }
  // Install into a scratch folder and rename it into place, so an interrupted install never looks finished.
  const scratch = `${prefix}.partial-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ private: true }));
  console.log(`${name}: installing ${program.package}@${program.version} …`);
  try {
    execFileSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', scratch, `${program.package}@${program.version}`],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    writeFileSync(join(scratch, '.installed'), `${program.package}@${program.version}\n`);
    rmSync(prefix, { recursive: true, force: true });
    renameSync(scratch, prefix);
    console.log(`${name}: installed in ${prefix}`);
  } catch (error) {
    failed += 1;
    rmSync(scratch, { recursive: true, force: true });
    console.error(`${name}: install failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
