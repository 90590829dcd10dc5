import { execFileSync } from 'node:child_process';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ToolResult } from '../types.js';
import { createGrepTool, type GrepBackend } from './grep.js';
import { findExecutable } from './support/find-executable.js';
import { createTestContext } from './test-support/context.js';
import { useTempDirs } from './test-support/temp-dir.js';

const tempDir = useTempDirs();
const rgPath = findExecutable('rg');

/** Both searches run every case; the ripgrep one only where rg is installed (CI installs it). */
const backends: { name: GrepBackend; rgPath: string | null; skip: boolean }[] = [
  { name: 'javascript', rgPath: null, skip: false },
  { name: 'ripgrep', rgPath: rgPath ?? null, skip: rgPath === undefined },
];

async function tree(files: Record<string, string>): Promise<string> {
  const cwd = await tempDir();
  const start = Date.now() / 1000 - 1_000;
  let i = 0;
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(cwd, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    // Later entries are newer, so files_with_matches order is predictable.
    await utimes(file, start + i, start + i);
    i++;
  }
  return cwd;
}

const project = {
  '.gitignore': 'dist/\n',
  'dist/bundle.js': 'const needle = 1;\n',
  'node_modules/dep/index.js': 'needle\n',
  'src/a.ts': 'import x from "y";\nconst needle = 1;\nexport default needle;\n',
  'src/b.js': 'function f() {\n  return "Needle";\n}\n',
  'src/sub/c.ts': 'one\ntwo\nneedle three\nfour\nfive\nsix\nseven\nneedle eight\n',
  'docs/readme.md': 'a needle in docs\n',
  'bin.dat': Buffer.from('needle\0binary').toString('latin1'),
};

describe.each(backends)('Grep ($name)', ({ name, rgPath: rg, skip }) => {
  const grepTool = createGrepTool({ rgPath: rg });
  let cwd: string;
  beforeEach(async () => {
    cwd = await tree(project);
  });

  async function grep(input: Record<string, unknown>, at = cwd): Promise<ToolResult> {
    const result = await grepTool.execute(input as never, createTestContext({ cwd: at }));
    if (typeof result === 'string') throw new Error('Grep returns objects');
    if (!result.isError) expect(result.data).toMatchObject({ backend: name });
    return result;
  }

  it.skipIf(skip)('lists matching files newest first, respecting .gitignore and skipping binaries', async () => {
    expect((await grep({ pattern: 'needle' })).content).toBe('Found 3 files\ndocs/readme.md\nsrc/sub/c.ts\nsrc/a.ts');
  });

  it.skipIf(skip)('shows matching lines with line numbers and context separators', async () => {
    expect((await grep({ pattern: 'needle', output_mode: 'content', path: 'src' })).content).toBe(
      'src/a.ts:2:const needle = 1;\nsrc/a.ts:3:export default needle;\nsrc/sub/c.ts:3:needle three\nsrc/sub/c.ts:8:needle eight',
    );
    expect((await grep({ pattern: 'needle', output_mode: 'content', path: 'src/sub', '-C': 1 })).content).toBe(
      'src/sub/c.ts-2-two\nsrc/sub/c.ts:3:needle three\nsrc/sub/c.ts-4-four\n--\nsrc/sub/c.ts-7-seven\nsrc/sub/c.ts:8:needle eight',
    );
    expect((await grep({ pattern: 'three', output_mode: 'content', '-n': false, '-B': 1 })).content).toBe('src/sub/c.ts-two\nsrc/sub/c.ts:needle three');
  });

  it.skipIf(skip)('counts matching lines per file', async () => {
    expect((await grep({ pattern: 'needle', output_mode: 'count' })).content).toBe(
      'docs/readme.md:1\nsrc/a.ts:2\nsrc/sub/c.ts:2\n\nFound 5 matching lines in 3 files.',
    );
  });

  it.skipIf(skip)('filters by case, glob and type', async () => {
    expect((await grep({ pattern: 'needle', '-i': true, glob: '*.js' })).content).toBe('Found 1 file\nsrc/b.js');
    expect((await grep({ pattern: 'needle', type: 'ts', output_mode: 'count' })).content).toContain('Found 4 matching lines in 2 files.');
    expect((await grep({ pattern: 'needle', glob: 'src/*.ts' })).content).toBe('Found 1 file\nsrc/a.ts');
    expect(await grep({ pattern: 'needle', type: 'cobol' })).toEqual({ content: expect.stringContaining('Unknown file type "cobol"'), isError: true });
  });

  it.skipIf(skip)('matches across lines in multiline mode', async () => {
    const result = await grep({ pattern: 'f\\(\\) \\{.*?Needle', multiline: true, output_mode: 'content' });
    expect(result.content).toBe('src/b.js:1:function f() {\nsrc/b.js:2:  return "Needle";');
  });

  it.skipIf(skip)('limits output with head_limit and says so', async () => {
    const result = await grep({ pattern: 'needle', output_mode: 'content', head_limit: 2 });
    expect(result.content).toBe(
      'docs/readme.md:1:a needle in docs\nsrc/a.ts:2:const needle = 1;\n[Output cut after 2 lines; there are more. Narrow the search or raise head_limit.]',
    );
  });

  it.skipIf(skip)('searches a single file', async () => {
    expect((await grep({ pattern: 'eight', path: 'src/sub/c.ts', output_mode: 'content' })).content).toBe('src/sub/c.ts:8:needle eight');
  });

  it.skipIf(skip)('gives clear error results for a bad regex, a missing path and bad input', async () => {
    expect(await grep({ pattern: '(unclosed' })).toEqual({ content: expect.stringContaining('Invalid regular expression'), isError: true });
    expect(await grep({ pattern: 'x', path: 'nowhere' })).toEqual({ content: expect.stringContaining('Path does not exist'), isError: true });
    expect(await grep({ pattern: 'x', path: 'src/a.ts/inner' })).toEqual({ content: expect.stringContaining('not a directory'), isError: true });
    expect(await grep({ pattern: 'x', output_mode: 'lines' })).toMatchObject({ isError: true, content: expect.stringContaining('output_mode') });
  });

  it.skipIf(skip)('says when nothing matches', async () => {
    expect((await grep({ pattern: 'absent-word' })).content).toBe('No matches found.');
  });
});

describe('Grep backends', () => {
  it.skipIf(rgPath === undefined)('give identical output on the same tree', async () => {
    const cwd = await tree(project);
    const js = createGrepTool({ rgPath: null });
    const rg = createGrepTool({ rgPath: rgPath! });
    const inputs = [
      { pattern: 'needle|Needle' },
      { pattern: 'e', output_mode: 'content', '-A': 2 },
      { pattern: 'o', output_mode: 'count', '-i': true },
    ];
    for (const input of inputs) {
      const a = await js.execute(input as never, createTestContext({ cwd }));
      const b = await rg.execute(input as never, createTestContext({ cwd }));
      expect(typeof a === 'object' && a.content).toBe(typeof b === 'object' && b.content);
    }
  });

  it('falls back to JavaScript when the ripgrep binary cannot run', async () => {
    const cwd = await tree(project);
    const tool = createGrepTool({ rgPath: path.join(cwd, 'no-such-rg') });
    expect(await tool.execute({ pattern: 'needle' }, createTestContext({ cwd }))).toMatchObject({ data: { backend: 'javascript' } });
  });

  it('looks ripgrep up on PATH by default', async () => {
    const cwd = await tree(project);
    const result = await createGrepTool().execute({ pattern: 'needle' }, createTestContext({ cwd }));
    expect(result).toMatchObject({ data: { backend: rgPath ? 'ripgrep' : 'javascript' } });
    if (rgPath) expect(execFileSync(rgPath, ['--version']).toString()).toMatch(/^ripgrep/);
  });
});
