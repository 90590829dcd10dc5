import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importEdges, moduleOf, ROOT, SRC, type ImportEdge } from './import-graph.js';

/**
 * ARCHITECTURE.md's module map, checked against src/: every folder has a row, and a folder imports
 * from exactly the folders its "imports from" cell names. `name (types)` there: type imports only;
 * `name (lazy)`: loaded with import() only, never by a static import.
 */
interface Row {
  module: string;
  imports: Map<string, 'types' | 'lazy' | 'any'>;
}

function parseMap(markdown: string): Row[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Module map'));
  if (!section) throw new Error('ARCHITECTURE.md has no "## Module map" section');
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`(src\/[^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!name || cells.length < 5) continue;
    const imports = new Map<string, 'types' | 'lazy' | 'any'>();
    for (const entry of (cells[3] ?? '').split(',').map((e) => e.trim())) {
      if (entry === '—' || entry === '') continue;
      const match = /^([a-z-]+(?:\.ts)?)(?:\s+\((types|lazy)\))?$/.exec(entry);
      if (!match) throw new Error(`ARCHITECTURE.md, row ${name}: "${entry}" is not "folder", "folder (types)" or "folder (lazy)"`);
      imports.set(`src/${match[1]}`, (match[2] as 'types' | 'lazy' | undefined) ?? 'any');
    }
    rows.push({ module: name.replace(/\/$/, ''), imports });
  }
  return rows;
}

/** The arrows between modules found in the code, each with how it is imported. */
function arrows(edges: readonly ImportEdge[]): Map<string, Map<string, Set<ImportEdge['kind']>>> {
  const found = new Map<string, Map<string, Set<ImportEdge['kind']>>>();
  for (const edge of edges) {
    if (!edge.to.startsWith('src/')) continue;
    const from = moduleOf(edge.from);
    const to = moduleOf(edge.to);
    if (from === to) continue;
    const targets = found.get(from) ?? new Map<string, Set<ImportEdge['kind']>>();
    found.set(from, targets);
    targets.set(to, (targets.get(to) ?? new Set()).add(edge.kind));
  }
  return found;
}

/** What is wrong with the map, one line each; empty when it is true. */
function mapProblems(rows: readonly Row[], modules: readonly string[], edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  const byName = new Map(rows.map((r) => [r.module, r]));
  for (const module of modules) if (!byName.has(module)) problems.push(`${module} has no row in the module map`);
  for (const row of rows) if (!modules.includes(row.module)) problems.push(`${row.module} is in the module map but not in src/`);
  const found = arrows(edges);
  const position = new Map(rows.map((r, i) => [r.module, i]));
  for (const row of rows) {
    const targets = found.get(row.module) ?? new Map<string, Set<ImportEdge['kind']>>();
    for (const [to, kinds] of targets) {
      const listed = row.imports.get(to);
      const how = [...kinds].sort().join(', ');
      if (!listed) problems.push(`${row.module} imports from ${to} (${how}), which its row does not list`);
      else if (listed === 'types' && (kinds.has('static') || kinds.has('dynamic'))) problems.push(`${row.module} imports values from ${to} (${how}); its row says types only`);
      else if (listed === 'lazy' && kinds.has('static')) problems.push(`${row.module} imports ${to} statically; its row says lazy (import() only)`);
    }
    for (const to of row.imports.keys()) {
      if (!targets.has(to)) problems.push(`${row.module}'s row lists ${to}, which it does not import`);
      else if ((position.get(to) ?? -1) >= (position.get(row.module) ?? -1)) problems.push(`${row.module} imports from ${to}, which is not listed above it`);
    }
  }
  return problems;
}

/** src/'s modules: each folder, and each file at its top (src/index.ts); test support is left out. */
function srcModules(): string[] {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((e) => (e.isDirectory() && e.name !== 'test-support') || (/\.ts$/.test(e.name) && !e.name.endsWith('.test.ts')))
    .map((e) => `src/${e.name}`)
    .sort();
}

/** The files of src/ named in the first column ("where") of ARCHITECTURE.md's "Lazy loads" table. */
function lazyLoadFiles(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Lazy loads'));
  if (!section) throw new Error('ARCHITECTURE.md has no "## Lazy loads" section');
  const where = section.split('\n').map((line) => line.split('|')[1] ?? '');
  return [...new Set(where.flatMap((cell) => [...cell.matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]!)))].sort();
}

describe("ARCHITECTURE.md's module map", () => {
  const markdown = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const rows = parseMap(markdown);
  const edges = importEdges();

  it('names every folder of src/, and each folder imports only from the folders above it that its row lists', () => {
    expect(rows.length).toBeGreaterThan(10);
    expect(mapProblems(rows, srcModules(), edges)).toEqual([]);
  });

  it('lists in "Lazy loads" exactly the files that load a module with import()', () => {
    const lazy = [...new Set(edges.filter((e) => e.kind === 'dynamic').map((e) => e.from))].sort();
    expect(lazy.length).toBeGreaterThan(0);
    expect(lazyLoadFiles(markdown)).toEqual(lazy);
  });

  describe('the check itself', () => {
    const map = (text: string) => parseMap(`## Module map\n\n| folder | owns | imports from |\n|---|---|---|\n${text}\n\n## Next\n`);
    const table = map('| `src/a` | a | — |\n| `src/b` | b | a (types) |\n| `src/c` | c | a, b (lazy) |');
    const edge = (from: string, to: string, kind: ImportEdge['kind']): ImportEdge => ({ from: `src/${from}`, to: `src/${to}`, kind });
    const sound = [edge('b/x.ts', 'a/y.ts', 'type'), edge('c/x.ts', 'a/y.ts', 'static'), edge('c/x.ts', 'b/index.ts', 'dynamic')];
    const modules = ['src/a', 'src/b', 'src/c'];

    it('passes a map that is true', () => {
      expect(mapProblems(table, modules, sound)).toEqual([]);
    });

    it('fails on a folder of src/ without a row', () => {
      expect(mapProblems(table, [...modules, 'src/d'], sound)).toEqual(['src/d has no row in the module map']);
    });

    it('fails on an import its row does not list, and on a listed one that is not there', () => {
      expect(mapProblems(table, modules, [...sound, edge('a/y.ts', 'c/x.ts', 'type')])).toEqual([
        'src/a imports from src/c (type), which its row does not list',
      ]);
      expect(mapProblems(table, modules, sound.slice(1))).toEqual(["src/b's row lists src/a, which it does not import"]);
    });

    it('fails on a value import where the row says types, and a static one where it says lazy', () => {
      expect(mapProblems(table, modules, [edge('b/x.ts', 'a/y.ts', 'static'), ...sound.slice(1)])).toEqual([
        'src/b imports values from src/a (static); its row says types only',
      ]);
      expect(mapProblems(table, modules, [...sound, edge('c/z.ts', 'b/index.ts', 'static')])).toEqual([
        'src/c imports src/b statically; its row says lazy (import() only)',
      ]);
    });

    it('fails on an arrow pointing down the table (a cycle between folders would need one)', () => {
      const upsideDown = map('| `src/a` | a | b |\n| `src/b` | b | — |');
      expect(mapProblems(upsideDown, ['src/a', 'src/b'], [edge('a/x.ts', 'b/y.ts', 'static')])).toEqual([
        'src/a imports from src/b, which is not listed above it',
      ]);
    });
  });
});
