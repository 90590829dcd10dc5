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
});
