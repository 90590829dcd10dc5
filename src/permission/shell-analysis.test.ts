import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeShell } from './shell-analysis.js';
import { loadShellParser } from './shell-parser.js';

beforeAll(() => loadShellParser());
const programs = (command: string) => analyzeShell(command).parts.map((p) => p.layers.at(-1)!.map((w) => w.value).join(' '));

describe('shell analysis', () => {
  it('splits compound commands and looks inside substitutions, subshells and scripts', () => {
    expect(programs('a && b || c; d | e & f')).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(programs('echo $(x) `y` <(z)')).toEqual(expect.arrayContaining(['x', 'y', 'z']));
    expect(programs('bash -c "p q"')).toContain('p q');
    expect(programs('find . -exec rm {} ;')).toContain('rm {}');
  });

  it('removes quotes, escapes and line continuations the way bash does', () => {
    expect(programs("\\r'm' \"-rf\" $'\\x2f'")).toEqual(['rm -rf /']);
    expect(programs('r\\\nm x')).toEqual(['rm x']);
  });

  it('strips wrappers and keeps VAR=value prefixes apart', () => {
    const [part] = analyzeShell('FOO=1 nohup timeout 5 nice -n 2 npm test').parts;
    expect(part!.assignments.map((a) => a.name)).toEqual(['FOO']);
    expect(part!.layers.at(-1)!.map((w) => w.value)).toEqual(['npm', 'test']);
    expect(part!.allowTransparent).toBe(true);
  });

  it('marks non-literal scripts and program names as opaque, and flags hidden characters and parse errors', () => {
    expect(analyzeShell('sh -c "$X"').parts[0]!.opaque).toBeDefined();
    expect(analyzeShell('$CMD x').parts[0]!.opaque).toBeDefined();
    expect(analyzeShell('ls\u202e').hiddenChars).toBe(true);
    expect(analyzeShell('ls ((').parseError).toBe(true);
  });

  it('collects redirections with their targets', () => {
    expect(analyzeShell('a > out 2>> err < in').redirects.map((r) => `${r.op}${r.target.value}`)).toEqual(['>out', '>>err', '<in']);
  });

  it('unwraps runners that execute their arguments, and never lets an allow for the runner through', () => {
    const inner = (command: string) => analyzeShell(command).parts[0]!.layers.at(-1)!.map((w) => w.value).join(' ');
    expect(inner('npx -y eslint .')).toBe('eslint .');
    expect(inner('pnpm exec vitest run')).toBe('vitest run');
    expect(inner('uv run --with requests python x.py')).toBe('python x.py');
    expect(inner('direnv exec . make')).toBe('make');
    expect(inner('mise x node@20 -- node -v')).toBe('node -v');
    expect(inner('nix develop -c cargo build')).toBe('cargo build');
    expect(inner('pnpm install')).toBe('pnpm install');
    expect(programs('nix-shell -p hello --run "make test"')).toContain('make test');
    expect(analyzeShell('npx eslint .').parts[0]!.allowTransparent).toBe(false);
  });

  it('gives deny rules other readings: git without its global options, wrapper words read another way', () => {
    const denyOnly = (command: string) => analyzeShell(command).parts[0]!.denyOnly.map((l) => l.map((w) => w.value).join(' '));
    expect(denyOnly('git -C dir -c a=b --no-pager push origin')).toContain('git push origin');
    expect(denyOnly('flock /tmp/lock rm -rf x')).toContain('rm -rf x');
    expect(denyOnly('git status')).toEqual([]);
  });

  it('notes subshells and brace groups, which no prefix allow rule approves', () => {
    expect(analyzeShell('(npm test)').forms).toHaveLength(1);
    expect(analyzeShell('{ npm test; }').forms).toHaveLength(1);
    expect(analyzeShell('npm test && ls').forms).toEqual([]);
  });
});
