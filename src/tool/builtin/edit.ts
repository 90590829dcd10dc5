import { readFile, stat, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../types.js';
import { describeFsError } from './support/fs-error.js';
import { errorResult, guardedExecute } from './support/guarded-execute.js';
import { readFirstViolation, recordRead } from './support/read-state.js';
import { resolvePath } from './support/resolve-path.js';
import { statIfExists } from './support/stat-if-exists.js';
import { truncateMiddle } from './support/truncate-middle.js';
import { unifiedDiff } from './support/unified-diff.js';

/** The diff shown to the model is capped; the whole diff stays in the result's `data`. */
export const EDIT_MAX_DIFF_CHARS = 10_000;

const inputSchema = z
  .object({
    file_path: z.string().min(1, 'file_path must not be empty'),
    old_string: z.string().min(1, 'old_string must not be empty; to create a file use Write'),
    new_string: z.string(),
    replace_all: z.boolean().optional(),
  })
  .refine((input) => input.old_string !== input.new_string, {
    message: 'old_string and new_string are identical, so there is nothing to change',
    path: ['new_string'],
  });

export type EditInput = z.infer<typeof inputSchema>;

function countOccurrences(text: string, search: string): number {
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++;
  return count;
}

type EditPrecondition = { problem: string } | { problem?: undefined; file: string; before: string; occurrences: number };

/** Why this Edit cannot run now (missing file, not read, changed since read, text absent or ambiguous), or the file's text. */
async function editPrecondition(input: EditInput, ctx: Pick<ToolContext, 'cwd' | 'runState'>): Promise<EditPrecondition> {
  const file = resolvePath(ctx.cwd, input.file_path);
  let info;
  try {
    info = await statIfExists(file);
  } catch (error) {
    return { problem: `Cannot edit ${file}: ${describeFsError(error, file)}` };
  }
  if (!info) return { problem: `${file} does not exist. To create a new file use Write.` };
  if (info.isDirectory()) return { problem: `${file} is a directory; Edit changes files.` };
  const violation = readFirstViolation(ctx, file, info.mtimeMs);
  if (violation) return { problem: violation };
  let before: string;
  try {
    before = await readFile(file, 'utf8');
  } catch (error) {
    return { problem: `Cannot edit ${file}: ${describeFsError(error, file)}` };
  }
  const occurrences = countOccurrences(before, input.old_string);
  if (occurrences === 0) {
    return { problem: `old_string was not found in ${file}. It must match exactly, including whitespace, indentation and line endings; Read the file again to copy the current text.` };
  }
  if (occurrences > 1 && !input.replace_all) {
    return { problem: `old_string occurs ${occurrences} times in ${file}. Include more surrounding lines to make it unique, or set replace_all to true to replace all ${occurrences}.` };
  }
  return { file, before, occurrences };
}

/**
 * Edit: replaces an exact string in a file. The string must occur exactly once (so the model says
 * precisely where) unless `replace_all`; the result shows the unified diff of the change.
 */
export const editTool = defineTool({
  name: 'Edit',
  description:
    'Replace an exact string in a file. `old_string` must match the file exactly (whitespace and indentation included) and occur exactly once, unless `replace_all` is true to replace every occurrence; include enough surrounding lines to make it unique. Read the file first in this run. Returns the diff of the change.',
  inputSchema,
  risk: 'MEDIUM',
  readOnly: false,
  permissionResource: (input, ctx) => (typeof input?.file_path === 'string' ? resolvePath(ctx.cwd, input.file_path) : undefined),
  validate: async (input, ctx) => (await editPrecondition(input, ctx)).problem,
  execute: guardedExecute('Edit', inputSchema, async (input, ctx) => {
    const checked = await editPrecondition(input, ctx);
    if (checked.problem !== undefined) return errorResult(checked.problem);
    const { file, before, occurrences } = checked;
    // split/join, not String.replace: the replacement must not interpret `$&` or `$1`.
    const after = input.replace_all
      ? before.split(input.old_string).join(input.new_string)
      : before.replace(input.old_string, () => input.new_string);
    try {
      await writeFile(file, after, 'utf8');
      recordRead(ctx, file, (await stat(file)).mtimeMs);
    } catch (error) {
      return errorResult(`Cannot edit ${file}: ${describeFsError(error, file)}`);
    }
    const diff = unifiedDiff(before, after, { fromFile: `a/${input.file_path}`, toFile: `b/${input.file_path}` });
    const replaced = occurrences === 1 ? '1 occurrence' : `${occurrences} occurrences`;
    const shown = truncateMiddle(diff, EDIT_MAX_DIFF_CHARS).text;
    return {
      content: `Edited ${file}: replaced ${replaced}.\n${shown}`,
      data: { path: file, replacements: occurrences, diff },
    };
  }),
});
