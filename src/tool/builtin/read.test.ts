import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolResult } from '../types.js';
import { READ_MAX_BYTES, readTool } from './read.js';
import { READ_FILES_KEY } from './support/read-state.js';
import { createTestContext } from './test-support/context.js';
import { runningAsRoot, useTempDirs } from './test-support/temp-dir.js';

const tempDir = useTempDirs();

async function read(input: unknown, cwd: string, runState = new Map<string, unknown>()): Promise<ToolResult> {
  const result = await readTool.execute(input as never, createTestContext({ cwd, runState }));
  if (typeof result === 'string') throw new Error('Read returns objects');
  return result;
}

describe('Read', () => {
  it('numbers lines like cat -n and records the file for the read-first rule', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'a.txt'), 'alpha\nbeta\n');
    const runState = new Map<string, unknown>();
    const result = await read({ file_path: 'a.txt' }, cwd, runState);
    expect(result).toEqual({ content: '     1\talpha\n     2\tbeta', data: expect.anything() });
    const file = path.join(cwd, 'a.txt');
    expect((runState.get(READ_FILES_KEY) as Map<string, number>).get(file)).toBe((await stat(file)).mtimeMs);
  });

  it('pages with offset and limit and says where to continue', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'n.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    const result = await read({ file_path: path.join(cwd, 'n.txt'), offset: 4, limit: 2 }, cwd);
    expect(result.content).toBe('     4\tline 4\n     5\tline 5\n\n[Lines 4-5 shown; the file continues. Read again with offset=6 to see more.]');
    expect((await read({ file_path: 'n.txt', offset: 9 }, cwd)).content).toBe('     9\tline 9\n    10\tline 10');
    expect(await read({ file_path: 'n.txt', offset: 50 }, cwd)).toEqual({ content: expect.stringContaining('has only 10 lines'), isError: true });
  });

  it('cuts very long lines', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'long.txt'), 'x'.repeat(5_000));
    const result = await read({ file_path: 'long.txt' }, cwd);
    expect(result.content).toContain('[line cut at 2000 characters]');
    expect(result.content.length).toBeLessThan(2_100);
  });

  it('refuses a whole-file read past the size cap but pages through it', async () => {
    const cwd = await tempDir();
    const line = 'y'.repeat(99) + '\n';
    await writeFile(path.join(cwd, 'big.txt'), line.repeat(Math.ceil((READ_MAX_BYTES * 2) / line.length)));
    expect(await read({ file_path: 'big.txt' }, cwd)).toEqual({ content: expect.stringContaining('Pass offset and limit'), isError: true });
    const paged = await read({ file_path: 'big.txt', offset: 1, limit: 100_000 }, cwd);
    expect(paged.isError).toBeUndefined();
    expect(paged.content).toMatch(/\[Output stopped at 256 KB after line (\d+)\. Read again with offset=\d+ to continue\.\]$/);
    expect(Buffer.byteLength(paged.content)).toBeLessThanOrEqual(READ_MAX_BYTES + 200);
  });

  it('refuses directories, binary content and binary extensions', async () => {
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'dir'));
    await writeFile(path.join(cwd, 'blob.dat'), Buffer.from([65, 0, 66]));
    await writeFile(path.join(cwd, 'logo.png'), 'not really a png');
    expect(await read({ file_path: 'dir' }, cwd)).toEqual({ content: expect.stringContaining('is a directory'), isError: true });
    expect(await read({ file_path: 'blob.dat' }, cwd)).toEqual({ content: expect.stringContaining('contains NUL bytes'), isError: true });
    expect(await read({ file_path: 'logo.png' }, cwd)).toEqual({ content: expect.stringContaining('binary file'), isError: true });
  });

  it('reports a missing file, and a path under a file (ENOTDIR), as error results', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'plain.txt'), 'x');
    expect(await read({ file_path: 'nope.txt' }, cwd)).toEqual({ content: expect.stringContaining('File does not exist'), isError: true });
    expect(await read({ file_path: 'plain.txt/inner' }, cwd)).toEqual({ content: expect.stringContaining('is a file, not a directory'), isError: true });
  });

  it.skipIf(runningAsRoot)('reports an OS permission error (EACCES) as an error result', async () => {
    const cwd = await tempDir();
    const file = path.join(cwd, 'secret.txt');
    await writeFile(file, 'x');
    await chmod(file, 0o000);
    expect(await read({ file_path: file }, cwd)).toEqual({ content: expect.stringContaining('permission denied'), isError: true });
  });

  it('says an empty file is empty', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'empty.txt'), '');
    expect((await read({ file_path: 'empty.txt' }, cwd)).content).toContain('exists but is empty');
  });

  it('turns bad input into an error result', async () => {
    const cwd = await tempDir();
    expect(await read({ file_path: '' }, cwd)).toMatchObject({ isError: true, content: expect.stringContaining('file_path') });
    expect(await read({ file_path: 'a', limit: 0 }, cwd)).toMatchObject({ isError: true, content: expect.stringContaining('limit') });
    expect(await read({ path: 'a' }, cwd)).toMatchObject({ isError: true });
  });

  it('is read-only, low risk, and names the absolute path as its resource', () => {
    expect(readTool.readOnly).toBe(true);
    expect(readTool.risk).toBe('LOW');
    expect(readTool.permissionResource?.({ file_path: 'src/x.ts' }, { cwd: '/p' })).toBe('/p/src/x.ts');
  });
});
