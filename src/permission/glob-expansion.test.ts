import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandBraces, expandGlob } from './glob-expansion.js';
import { tempWorkspace } from './test-support/test-fixtures.js';

const ws = tempWorkspace();

beforeAll(() => {
  mkdirSync(path.join(ws.project, 'config'), { recursive: true });
  for (const f of ['.env', 'a.ts', 'b.ts', 'config/.env']) writeFileSync(path.join(ws.project, f), '');
  mkdirSync(path.join(ws.base, 'many'));
  for (let i = 0; i < 5_001; i++) writeFileSync(path.join(ws.base, 'many', `f${i}`), '');
});
afterAll(() => rmSync(ws.base, { recursive: true, force: true }));

describe('brace expansion', () => {
  it('expands lists, nested lists and sequences as bash does', () => {
    expect(expandBraces('.{env,x}')).toEqual(['.env', '.x']);
    expect(expandBraces('a{b,c{d,e}}f')).toEqual(['abf', 'acdf', 'acef']);
    expect(expandBraces('f{1..3}')).toEqual(['f1', 'f2', 'f3']);
    expect(expandBraces('{a..c}')).toEqual(['a', 'b', 'c']);
    expect(expandBraces('{x}')).toEqual(['{x}']);
  });

  it('gives up (undefined) on expansions too large to check', () => {
    expect(expandBraces('{1..100000}')).toBeUndefined();
    expect(expandBraces('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}')).toBeUndefined();
  });
});

describe('glob expansion against the disk', () => {
  const at = (pattern: string) => expandGlob(pattern, ws.project, ws.home)?.map((p) => path.relative(ws.project, p)).sort();

  it('finds a dot file for patterns that spell or bracket the dot', () => {
    expect(at('.en?')).toEqual(['.env']);
    expect(at('.e*')).toEqual(['.env']);
    expect(at('[.]env')).toEqual(['.env']);
    expect(at('?env')).toEqual(['.env']);
    expect(at('*/.en?')).toEqual(['config/.env']);
  });

  it('leaves dot files out of a leading *, as the shell does', () => {
    expect(at('*.ts')).toEqual(['a.ts', 'b.ts']);
    expect(at('*')).not.toContain('.env');
  });

  it('returns nothing for no match and undefined when there are too many entries to look at', () => {
    expect(at('nothing*')).toEqual([]);
    expect(at('missing/*')).toEqual([]);
    expect(at('../many/*')).toBeUndefined();
  });
});
