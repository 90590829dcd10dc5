import { describe, expect, it } from 'vitest';
import { compileBashPattern, escapeBashPattern, looseMatch } from './bash-pattern.js';

const words = (s: string) => s.split(' ');

describe('Bash rule patterns', () => {
  it('treats a trailing space-star as a word boundary with optional arguments', () => {
    const p = compileBashPattern('ls *');
    expect(p.exact.test('ls')).toBe(true);
    expect(p.exact.test('ls -la')).toBe(true);
    expect(p.exact.test('lsof')).toBe(false);
  });

  it('reads legacy prefix:* as prefix * only at the end', () => {
    expect(compileBashPattern('git commit:*').exact.test('git commit -m x')).toBe(true);
    expect(compileBashPattern('git:* push').exact.test('git push')).toBe(false);
  });

  it('matches deny patterns under any spelling of the same flags', () => {
    const p = compileBashPattern('rm -rf *');
    for (const c of ['rm -fr a', 'rm -r -f a', 'rm --recursive --force a', 'rm -R -f a', 'rm -rfv a']) expect(looseMatch(p, words(c))).toBe(true);
    expect(looseMatch(p, words('rm -r a'))).toBe(false);
  });

  it('escapes stars so a saved rule matches only itself', () => {
    const p = compileBashPattern(escapeBashPattern('rm a*'));
    expect(p.exact.test('rm a*')).toBe(true);
    expect(p.exact.test('rm ab')).toBe(false);
  });
});
