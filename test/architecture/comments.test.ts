import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './import-graph.js';

/**
 * Comments age well when they say why in plain words: an issue number, a seed file's section or a
 * research note's paragraph means nothing to the next reader once those are gone or renumbered.
 */
const STALE = [/seed 0/i, /issue \d/i, /§/];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : files(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

/** Each comment of a TypeScript text, with its line (strings and templates are not comments). */
function comments(text: string, tsx: boolean): Array<{ line: number; text: string }> {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, tsx ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard, text);
  const found: Array<{ line: number; text: string }> = [];
  let line = 1;
  let counted = 0;
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.SingleLineCommentTrivia || token === ts.SyntaxKind.MultiLineCommentTrivia) {
      const start = scanner.getTokenStart();
      for (; counted < start; counted++) if (text.charCodeAt(counted) === 10) line++;
      found.push({ line, text: scanner.getTokenText() });
    }
  }
  return found;
}

function staleComments(text: string, tsx = false): string[] {
  return comments(text, tsx).flatMap((c) => {
    const lines = c.text.split('\n');
    const hits = lines.flatMap((l, i) => (STALE.some((p) => p.test(l)) ? [`${c.line + i}: ${l.trim()}`] : []));
    // "issue" at the end of one line and its number at the start of the next.
    const joined = lines.map((l) => l.replace(/^\s*\*?\s*/, '')).join(' ');
    return hits.length || !STALE.some((p) => p.test(joined)) ? hits : [`${c.line}: ${lines[0]!.trim()}`];
  });
}

describe('comments in src/ and web/src/', () => {
  it('name no issue, seed file section or research paragraph', () => {
    const found = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'web/src'))].flatMap((file) =>
      staleComments(readFileSync(file, 'utf8'), file.endsWith('.tsx')).map((hit) => `${relative(ROOT, file)}:${hit}`),
    );
    expect(found).toEqual([]);
  });

  it('finds them in line and block comments, not in strings or code', () => {
    const text = [
      "const a = 'issue 15'; // see issue 15",
      '/**',
      ' * The bus of seed 002.',
      ' */',
      'test(`seed 000 §4`, () => {});',
      '/* research §6 */ const b = 1;',
      '/** A prompt per run (bench/channels.ts, issue',
      ' * 15). */',
    ].join('\n');
    expect(staleComments(text)).toEqual([
      '1: // see issue 15',
      '3: * The bus of seed 002.',
      '6: /* research §6 */',
      '7: /** A prompt per run (bench/channels.ts, issue',
    ]);
  });
});
