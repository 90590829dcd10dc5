import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolContext, ToolResult } from '../types.js';
import { editTool } from './edit.js';
import { readTool } from './read.js';
import { createTestContext } from './test-support/context.js';
import { useTempDirs } from './test-support/temp-dir.js';

const tempDir = useTempDirs();

async function run(tool: typeof editTool | typeof readTool, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const result = await tool.execute(input as never, ctx);
  if (typeof result === 'string') throw new Error('built-ins return objects');
  return result;
}

async function readFirst(content: string): Promise<{ ctx: ToolContext; file: string }> {
  const cwd = await tempDir();
  const file = path.join(cwd, 'code.ts');
  await writeFile(file, content);
  const ctx = createTestContext({ cwd });
  await run(readTool, { file_path: file }, ctx);
  return { ctx, file };
}

describe('Edit', () => {
  it('replaces a unique string and reports the unified diff', async () => {
    const { ctx, file } = await readFirst('a\nb\nconst x = 1;\nc\nd\ne\nf\n');
    const result = await run(editTool, { file_path: 'code.ts', old_string: 'const x = 1;', new_string: 'const x = 2;' }, ctx);
    expect(result.isError).toBeUndefined();
    expect(result.content).toBe(
      `Edited ${file}: replaced 1 occurrence.\n--- a/code.ts\n+++ b/code.ts\n@@ -1,6 +1,6 @@\n a\n b\n-const x = 1;\n+const x = 2;\n c\n d\n e`,
    );
    expect(await readFile(file, 'utf8')).toBe('a\nb\nconst x = 2;\nc\nd\ne\nf\n');
  });

  it('refuses an ambiguous string and says how many times it occurs', async () => {
    const { ctx, file } = await readFirst('x\nx\nx\n');
    const result = await run(editTool, { file_path: file, old_string: 'x', new_string: 'y' }, ctx);
    expect(result).toEqual({ content: expect.stringContaining('occurs 3 times'), isError: true });
    expect(await readFile(file, 'utf8')).toBe('x\nx\nx\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const { ctx, file } = await readFirst('x\nx\nx\n');
    const result = await run(editTool, { file_path: file, old_string: 'x', new_string: 'y', replace_all: true }, ctx);
    expect(result.content).toContain('replaced 3 occurrences');
    expect(await readFile(file, 'utf8')).toBe('y\ny\ny\n');
  });

  it('inserts the new string literally, without $ patterns', async () => {
    const { ctx, file } = await readFirst('price = P\n');
    await run(editTool, { file_path: file, old_string: 'P', new_string: "$& and $1 and $'" }, ctx);
    expect(await readFile(file, 'utf8')).toBe("price = $& and $1 and $'\n");
  });

  it('says when old_string is not found', async () => {
    const { ctx, file } = await readFirst('hello\n');
    expect(await run(editTool, { file_path: file, old_string: 'bye', new_string: 'x' }, ctx)).toEqual({
      content: expect.stringContaining('old_string was not found'),
      isError: true,
    });
  });

  it('refuses identical old and new strings', async () => {
    const { ctx, file } = await readFirst('hello\n');
    expect(await run(editTool, { file_path: file, old_string: 'hello', new_string: 'hello' }, ctx)).toEqual({
      content: expect.stringContaining('identical'),
      isError: true,
    });
  });

  it('requires a Read first', async () => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'f.txt'), 'hello');
    const result = await run(editTool, { file_path: 'f.txt', old_string: 'hello', new_string: 'bye' }, createTestContext({ cwd }));
    expect(result).toEqual({ content: expect.stringContaining('Use the Read tool on it first'), isError: true });
  });

  it('reports a missing file as an error result', async () => {
    const ctx = createTestContext({ cwd: await tempDir() });
    expect(await run(editTool, { file_path: 'missing.txt', old_string: 'a', new_string: 'b' }, ctx)).toEqual({
      content: expect.stringContaining('does not exist'),
      isError: true,
    });
  });
});
