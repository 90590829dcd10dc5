import { execFileSync } from 'node:child_process';
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolResult } from '../types.js';
import { READ_MAX_BYTES, READ_WHOLE_MAX_BYTES, readTool } from './read.js';
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

  it('reads a small file whole and a large one streamed into the same numbered lines', async () => {
    const cwd = await tempDir();
    // Every kind of line end readline knows (\r\n, \n, a lone \r), an empty line, multibyte
    // characters, a line past the cut, and no end on the last line.
    const head = ['crlf line\r\n', 'lf line\n', 'lone cr\r', 'after cr\n', '\n', 'größe ✓ 𝄞\n', `${'z'.repeat(2_500)}\n`, 'last'].join('');
    await writeFile(path.join(cwd, 'small.txt'), head);
    const filler = `${'f'.repeat(79)}\n`.repeat(Math.ceil(READ_WHOLE_MAX_BYTES / 80) + 10);
    await writeFile(path.join(cwd, 'large.txt'), head.replace(/last$/, 'last\n') + filler);
    expect((await stat(path.join(cwd, 'large.txt'))).size).toBeGreaterThan(READ_WHOLE_MAX_BYTES);

    const small = await read({ file_path: 'small.txt' }, cwd);
    expect(small.content.split('\n').slice(0, 6)).toEqual(['     1\tcrlf line', '     2\tlf line', '     3\tlone cr', '     4\tafter cr', '     5\t', '     6\tgröße ✓ 𝄞']);
    expect(small.content).toContain('[line cut at 2000 characters]');
    expect(small.data).toMatchObject({ firstLine: 1, lastLine: 8, totalLines: 8 });

    const large = await read({ file_path: 'large.txt', offset: 1, limit: 8 }, cwd);
    expect(large.content).toBe(`${small.content}\n\n[Lines 1-8 shown; the file continues. Read again with offset=9 to see more.]`);
    const middle = await read({ file_path: 'small.txt', offset: 3, limit: 3 }, cwd);
    expect((await read({ file_path: 'large.txt', offset: 3, limit: 3 }, cwd)).content.split('\n\n')[0]).toBe(middle.content.split('\n\n')[0]);
  });

  it('reads the end of a large file and says how many lines it has when the offset is past it', async () => {
    const cwd = await tempDir();
    const count = Math.ceil(READ_WHOLE_MAX_BYTES / 50) + 100;
    await writeFile(path.join(cwd, 'log.txt'), Array.from({ length: count }, (_, i) => `entry ${i + 1}`.padEnd(49, '.')).join('\n'));
    const tail = await read({ file_path: 'log.txt', offset: count - 1 }, cwd);
    expect(tail.content).toBe(`${String(count - 1).padStart(6)}\tentry ${count - 1}${'.'.repeat(49 - `entry ${count - 1}`.length)}\n${String(count).padStart(6)}\tentry ${count}${'.'.repeat(49 - `entry ${count}`.length)}`);
    expect(await read({ file_path: 'log.txt', offset: count + 5 }, cwd)).toEqual({ content: expect.stringContaining(`has only ${count} lines`), isError: true });
  });

  it('refuses binary content in a large file read with offset and limit', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'big.dat'), Buffer.concat([Buffer.from([65, 0, 66, 10]), Buffer.alloc(READ_WHOLE_MAX_BYTES + 1_000, 65)]));
    expect(await read({ file_path: 'big.dat', offset: 1, limit: 5 }, cwd)).toEqual({ content: expect.stringContaining('contains NUL bytes'), isError: true });
  });

  it.skipIf(process.platform === 'win32')('refuses a named pipe at once instead of waiting for a writer', async () => {
    const cwd = await tempDir();
    const fifo = path.join(cwd, 'pipe');
    execFileSync('mkfifo', [fifo]);
    expect(await read({ file_path: fifo }, cwd)).toEqual({ content: expect.stringContaining('not a regular file'), isError: true });
  });

  it.skipIf(process.platform === 'win32')('refuses a Unix socket as not a regular file', async () => {
    const cwd = await tempDir();
    const socketPath = path.join(cwd, 'sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      expect(await read({ file_path: socketPath }, cwd)).toEqual({ content: expect.stringContaining('not a regular file'), isError: true });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it.skipIf(process.platform !== 'linux')('reads a file that holds more than its size says (/proc reports 0)', async () => {
    const cwd = await tempDir();
    expect((await stat('/proc/self/status')).size).toBe(0);
    const result = await read({ file_path: '/proc/self/status' }, cwd);
    expect(result.isError).toBeUndefined();
    expect(result.content).toMatch(/^ {5}1\tName:\t/);
  });

  it('is read-only, low risk, and names the absolute path as its resource', () => {
    expect(readTool.readOnly).toBe(true);
    expect(readTool.risk).toBe('LOW');
    expect(readTool.permissionResource?.({ file_path: 'src/x.ts' }, { cwd: '/p' })).toBe('/p/src/x.ts');
  });
});
