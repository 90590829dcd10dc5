import { describe, expect, it } from 'vitest';
import { compilePathPattern, escapeGlob } from './path-pattern.js';

const root = '/proj';
const home = '/home/u';
const m = (spec: string, p: string, cwd = '/proj', nocase = false) => compilePathPattern(spec, root, home).matches(p, cwd, nocase);

describe('gitignore-style path patterns', () => {
  it('anchors ./path at the working directory, /path at the settings root, //path absolutely and ~/ at home', () => {
    expect(m('./src/**', '/work/src/a', '/work')).toBe(true);
    expect(m('/src/**', '/proj/src/a', '/work')).toBe(true);
    expect(m('//etc/hosts', '/etc/hosts')).toBe(true);
    expect(m('~/.ssh/**', '/home/u/.ssh/id')).toBe(true);
  });

  it('matches a bare name at any depth and a folder with everything inside it', () => {
    expect(m('.env', '/proj/a/b/.env')).toBe(true);
    expect(m('secrets', '/proj/x/secrets/key')).toBe(true);
  });

  it('keeps * inside one segment and lets ** cross', () => {
    expect(m('src/*.ts', '/proj/src/a.ts')).toBe(true);
    expect(m('src/*.ts', '/proj/src/d/a.ts')).toBe(false);
    expect(m('src/**/*.ts', '/proj/src/d/a.ts')).toBe(true);
  });

  it('ignores case only when asked, and escapes glob characters in saved paths', () => {
    expect(m('.env', '/proj/.ENV')).toBe(false);
    expect(m('.env', '/proj/.ENV', '/proj', true)).toBe(true);
    expect(m(`//${escapeGlob('/proj/[id].ts').slice(1)}`, '/proj/[id].ts')).toBe(true);
    expect(m(`//${escapeGlob('/proj/[id].ts').slice(1)}`, '/proj/i.ts')).toBe(false);
  });
});

describe('deny and ask path patterns (any depth)', () => {
  const deny = (spec: string, p: string) => compilePathPattern(spec, root, home, true).matches(p, '/proj', true);

  it('matches ./name and relative folder patterns at any depth, as Claude Code deny rules do', () => {
    expect(deny('./.env', '/proj/config/.env')).toBe(true);
    expect(deny('./secrets/**', '/proj/a/secrets/key')).toBe(true);
    expect(m('./.env', '/proj/config/.env')).toBe(false);
  });

  it('keeps anchored patterns anchored', () => {
    expect(deny('/src/**', '/proj/x/src/a')).toBe(false);
    expect(deny('//etc/hosts', '/x/etc/hosts')).toBe(false);
    expect(deny('~/.ssh/**', '/proj/.ssh/id')).toBe(false);
    expect(deny('../other/x', '/other/x')).toBe(true);
  });

  it('says which patterns name no folder (they never open paths outside the project)', () => {
    expect(compilePathPattern('**', root, home).anywhere).toBe(true);
    expect(compilePathPattern('*.ts', root, home).anywhere).toBe(true);
    expect(compilePathPattern('//etc/**', root, home).anywhere).toBe(false);
    expect(compilePathPattern('./src/**', root, home).anywhere).toBe(false);
  });
});
