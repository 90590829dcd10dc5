import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Stats } from 'node:fs';
import { defineTool, type ToolContext } from '../types.js';
import { describeFsError } from './support/fs-error.js';
import { errorResult, guardedExecute } from './support/guarded-execute.js';
import { readFirstViolation, recordRead } from './support/read-state.js';
import { resolvePath } from './support/resolve-path.js';
import { statIfExists } from './support/stat-if-exists.js';
import { unifiedDiff } from './support/unified-diff.js';

const inputSchema = z.object({
  file_path: z.string().min(1, 'file_path must not be empty'),
  content: z.string(),
});

export type WriteInput = z.infer<typeof inputSchema>;

function countLines(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

type WritePrecondition = { problem: string } | { problem?: undefined; file: string; existing: Stats | undefined };

/** Why this Write cannot run now (a directory, an existing file not read or changed since read), or what is there. */
async function writePrecondition(input: WriteInput, ctx: Pick<ToolContext, 'cwd' | 'runState'>): Promise<WritePrecondition> {
  const file = resolvePath(ctx.cwd, input.file_path);
  let existing;
  try {
    existing = await statIfExists(file);
  } catch (error) {
    return { problem: `Cannot write ${file}: ${describeFsError(error, file)}` };
  }
  if (existing?.isDirectory()) return { problem: `${file} is a directory; give the path of a file to write.` };
  if (existing) {
    const violation = readFirstViolation(ctx, file, existing.mtimeMs);
    if (violation) return { problem: violation };
  }
  return { file, existing };
}

/**
 * Write: creates a file (and its parent folders) or replaces one. Replacing needs a Read of the
 * file earlier in the run, and the file unchanged since, so the model never clobbers unseen work.
 */
export const writeTool = defineTool({
  name: 'Write',
  description:
    'Write a file (absolute path, or relative to the working directory), creating parent folders as needed, or replace an existing file entirely. To replace a file you must Read it first in this run; to change part of a file prefer Edit.',
  inputSchema,
  risk: 'MEDIUM',
  readOnly: false,
  permissionResource: (input, ctx) => (typeof input?.file_path === 'string' ? resolvePath(ctx.cwd, input.file_path) : undefined),
  validate: async (input, ctx) => (await writePrecondition(input, ctx)).problem,
  execute: guardedExecute('Write', inputSchema, async (input, ctx) => {
    const checked = await writePrecondition(input, ctx);
    if (checked.problem !== undefined) return errorResult(checked.problem);
    const { file, existing } = checked;
    try {
      const before = existing ? await readFile(file, 'utf8') : '';
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, input.content, 'utf8');
      // The run now knows the file as it wrote it: a follow-up Edit needs no new Read.
      recordRead(ctx, file, (await stat(file)).mtimeMs);
      const lines = countLines(input.content);
      const bytes = Buffer.byteLength(input.content);
      if (!existing) {
        return { content: `Created ${file} (${lines} lines, ${bytes} bytes).`, data: { path: file, created: true, bytes } };
      }
      const diff = unifiedDiff(before, input.content, { fromFile: `a/${input.file_path}`, toFile: `b/${input.file_path}` });
      return {
        content: `Replaced the content of ${file} (${lines} lines, ${bytes} bytes).`,
        data: { path: file, created: false, bytes, diff },
      };
    } catch (error) {
      return errorResult(`Cannot write ${file}: ${describeFsError(error, file)}`);
    }
  }),
});
