import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// Which test files the fast lane (`npm run test:unit`) leaves to the full run (`npm test`).
//
// A test is slow when it needs a resource a developer's machine may not have running: Postgres, a
// browser, a real terminal (tmux). Nobody keeps a list of such tests: a test is slow when it, or
// any test-support module it imports (followed transitively; production code is not followed), uses
// one of the resources below. A new test that opens the shared Postgres through postgres-test-db,
// launches Chromium through browser-support or drives the CLI through TmuxSession is slow without
// anyone naming it. lanes.test.ts checks the markers still find the tests they are meant to find.

/**
 * The resources that make a test slow, each found by what a module that uses it must contain (spelled
 * so that this file, which test/lanes.test.ts imports, does not match them itself).
 */
export const SLOW_RESOURCES: readonly { resource: string; marker: RegExp }[] = [
  { resource: 'Postgres', marker: /\bfrom ['"]pg['"]|\b(init[d]b|pg[_]ctl)\b|127\.0\.0\.1:5432\b/ },
  { resource: 'a browser', marker: /\bfrom ['"]playwright(-core)?['"]|\/usr\/bin\/chromium/ },
  { resource: 'tmux', marker: /\b(spawn|spawnSync|execFile|execFileSync)\(\s*['"]tmux['"]/ },
];

export const TEST_ROOTS = ['src', 'test'] as const;

/** Every test file under the roots, relative to `root`, sorted. */
export function testFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(relative(root, path));
    }
  };
  for (const top of TEST_ROOTS) if (existsSync(join(root, top))) walk(join(root, top));
  return found.sort();
}

/** Value imports, re-exports and dynamic imports of relative modules (type-only ones are erased). */
const IMPORT = /^\s*(?:import|export)\s+(?!type\s)(?:[^'"`;]*?\s+from\s+)?['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/gm;

/** Test support: code that exists for tests (a test-support folder, anything under test/). */
function isTestCode(root: string, file: string): boolean {
  const rel = relative(root, file);
  return rel.startsWith(`test${'/'}`) || rel.split('/').includes('test-support') || rel.endsWith('.test.ts');
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => existsSync(c) && !c.endsWith('/'));
}

/**
 * The resources a test file needs: those whose marker appears in it or in a test-support module it
 * reaches. Empty for a fast test.
 */
export function resourcesOf(root: string, testFile: string): string[] {
  const needs = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const { resource, marker } of SLOW_RESOURCES) if (marker.test(text)) needs.add(resource);
    for (const match of text.matchAll(IMPORT)) {
      const target = resolveImport(file, (match[1] ?? match[2])!);
      if (target && target.endsWith('.ts') && isTestCode(root, target)) visit(target);
    }
  };
  visit(resolve(root, testFile));
  return [...needs].sort();
}

/** The test files the fast lane leaves out, relative to `root`. */
export function slowTestFiles(root: string): string[] {
  return testFiles(root).filter((file) => resourcesOf(root, file).length > 0);
}
