import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolContext, ToolResult } from '../types.js';
import { readTool } from './read.js';
import { createTestContext } from './test-support/context.js';
import { useTempDirs } from './test-support/temp-dir.js';
import { writeTool } from './write.js';

const tempDir = useTempDirs();

async function run(tool: typeof writeTool | typeof readTool, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const result = await tool.execute(input as never, ctx);
  if (typeof result === 'string') throw new Error('built-ins return objects');
  return result;
}

describe('Write', () => {
  it('creates a new file and its parent folders', async () => {
    const cwd = await tempDir();
    const result = await run(writeTool, { file_path: 'a/b/c.txt', content: 'one\ntwo\n' }, createTestContext({ cwd }));
    expect(result.content).toBe(`Created ${path.join(cwd, 'a/b/c.txt')} (2 lines, 8 bytes).`);
    expect(await readFile(path.join(cwd, 'a/b/c.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('refuses to overwrite a file the run has not read', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'x.txt'), 'original');
    const result = await run(writeTool, { file_path: 'x.txt', content: 'new' }, createTestContext({ cwd }));
    expect(result).toEqual({ content: expect.stringContaining('has not been read in this run'), isError: true });
    expect(await readFile(path.join(cwd, 'x.txt'), 'utf8')).toBe('original');
  });

  it('overwrites after a Read, and again without a new Read', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'x.txt'), 'original\n');
    const ctx = createTestContext({ cwd });
    await run(readTool, { file_path: 'x.txt' }, ctx);
    const first = await run(writeTool, { file_path: 'x.txt', content: 'changed\n' }, ctx);
    expect(first.content).toContain('Replaced the content of');
    expect(first.data).toMatchObject({ diff: expect.stringContaining('-original\n+changed') });
    expect((await run(writeTool, { file_path: 'x.txt', content: 'again\n' }, ctx)).isError).toBeUndefined();
    expect(await readFile(path.join(cwd, 'x.txt'), 'utf8')).toBe('again\n');
  });

  it('asks for a new Read when the file changed on disk since it was read', async () => {
    const cwd = await tempDir();
    const file = path.join(cwd, 'x.txt');
    await writeFile(file, 'original');
    const ctx = createTestContext({ cwd });
    await run(readTool, { file_path: file }, ctx);
    await writeFile(file, 'someone else');
    const later = new Date(Date.now() + 5_000);
    await utimes(file, later, later);
    const result = await run(writeTool, { file_path: file, content: 'mine' }, ctx);
    expect(result).toEqual({ content: expect.stringContaining('modified on disk since you last read it'), isError: true });
    expect(await readFile(file, 'utf8')).toBe('someone else');
  });

  it('reports a directory target and a parent that is a file as error results', async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'dir'));
    await writeFile(path.join(cwd, 'file'), 'x');
    const ctx = createTestContext({ cwd });
    expect(await run(writeTool, { file_path: 'dir', content: 'x' }, ctx)).toEqual({ content: expect.stringContaining('is a directory'), isError: true });
    expect(await run(writeTool, { file_path: 'file/child.txt', content: 'x' }, ctx)).toEqual({
      content: expect.stringContaining('not a directory'),
      isError: true,
    });
  });

  it('turns bad input into an error result', async () => {
    const ctx = createTestContext({ cwd: await tempDir() });
    expect(await run(writeTool, { file_path: 'x.txt' }, ctx)).toMatchObject({ isError: true, content: expect.stringContaining('content') });
  });
});
