import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolResult } from '../types.js';
import { GLOB_MAX_RESULTS, globTool } from './glob.js';
import { createTestContext } from './test-support/context.js';
import { useTempDirs } from './test-support/temp-dir.js';

const tempDir = useTempDirs();

async function glob(input: unknown, cwd: string): Promise<ToolResult> {
  const result = await globTool.execute(input as never, createTestContext({ cwd }));
  if (typeof result === 'string') throw new Error('Glob returns objects');
  return result;
}

/** Writes files with mtimes one second apart, in the order given (last is newest). */
async function writeAged(cwd: string, files: Record<string, string>): Promise<void> {
  const start = Date.now() / 1000 - 1_000;
  let i = 0;
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(cwd, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    await utimes(file, start + i, start + i);
    i++;
  }
}

describe('Glob', () => {
  it('lists matching files newest first', async () => {
    const cwd = await tempDir();
    await writeAged(cwd, { 'old.ts': '', 'src/mid.ts': '', 'readme.md': '', 'src/deep/new.ts': '' });
    expect((await glob({ pattern: '**/*.ts' }, cwd)).content).toBe('src/deep/new.ts\nsrc/mid.ts\nold.ts');
    expect((await glob({ pattern: '*.ts' }, cwd)).content).toBe('old.ts');
    expect((await glob({ pattern: '*.ts', path: 'src' }, cwd)).content).toBe('src/mid.ts');
    expect((await glob({ pattern: `${cwd}/src/**/*.ts` }, cwd)).content).toBe('src/deep/new.ts\nsrc/mid.ts');
  });

  it('respects .gitignore files, nested ones included, and skips .git and node_modules', async () => {
    const cwd = await tempDir();
    await writeAged(cwd, {
      '.gitignore': 'dist/\n*.log\n',
      'dist/out.js': '',
      'node_modules/pkg/index.js': '',
      '.git/hooks/x.js': '',
      'app.log': '',
      'lib/.gitignore': 'generated.js\n',
      'lib/generated.js': '',
      'lib/kept.js': '',
      'index.js': '',
    });
    expect((await glob({ pattern: '**/*.js' }, cwd)).content).toBe('index.js\nlib/kept.js');
    expect((await glob({ pattern: '**/*.log' }, cwd)).content).toContain('No files found');
  });

  it('caps the list and says how many matched', async () => {
    const cwd = await tempDir();
    await Promise.all(Array.from({ length: GLOB_MAX_RESULTS + 20 }, (_, i) => writeFile(path.join(cwd, `f${i}.txt`), '')));
    const result = await glob({ pattern: '*.txt' }, cwd);
    expect(result.content.split('\n').filter((line) => line.endsWith('.txt'))).toHaveLength(GLOB_MAX_RESULTS);
    expect(result.content).toContain(`[Showing the ${GLOB_MAX_RESULTS} most recently modified of ${GLOB_MAX_RESULTS + 20} matches.`);
  });

  it('reports a missing or non-directory path as an error result', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'file.txt'), '');
    expect(await glob({ pattern: '*', path: 'missing' }, cwd)).toEqual({ content: expect.stringContaining('does not exist'), isError: true });
    expect(await glob({ pattern: '*', path: 'file.txt' }, cwd)).toEqual({ content: expect.stringContaining('not a directory'), isError: true });
    expect(await glob({ pattern: '*', path: 'file.txt/x' }, cwd)).toEqual({ content: expect.stringContaining('is a file, not a directory'), isError: true });
    expect(await glob({ pattern: '' }, cwd)).toMatchObject({ isError: true, content: expect.stringContaining('pattern') });
  });
});
