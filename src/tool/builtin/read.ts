import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { defineTool } from '../types.js';
import { BINARY_SNIFF_BYTES, hasBinaryExtension, looksBinary } from './support/binary-file.js';
import { describeFsError, isErrnoError } from './support/fs-error.js';
import { errorResult, guardedExecute } from './support/guarded-execute.js';
import { recordRead } from './support/read-state.js';
import { resolvePath } from './support/resolve-path.js';

export const READ_DEFAULT_LIMIT = 2_000;
export const READ_MAX_LINE_CHARS = 2_000;
/** A whole-file read larger than this is refused; with offset/limit, output stops here. */
export const READ_MAX_BYTES = 256 * 1024;

const inputSchema = z.object({
  file_path: z.string().min(1, 'file_path must not be empty'),
  offset: z.number().int('offset is a line number').min(0, 'offset is a line number, 1 or more').optional(),
  limit: z.number().int('limit is a number of lines').positive('limit must be at least 1').optional(),
});

export type ReadInput = z.infer<typeof inputSchema>;

/** `cat -n` style: the line number right-aligned in six columns, a tab, the line. */
export function numberLine(lineNumber: number, line: string): string {
  return `${String(lineNumber).padStart(6)}\t${line}`;
}

interface Window {
  lines: string[];
  firstLine: number;
  /** Lines the file holds, when the read reached its end. */
  totalLines?: number;
  /** The output cap stopped the read before `limit` lines. */
  cappedAt?: number;
}

/** Streams the file so a 1 GB log costs only the lines asked for. */
async function readWindow(file: string, firstLine: number, limit: number): Promise<Window> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const out: string[] = [];
  let lineNumber = 0;
  let bytes = 0;
  let reachedEnd = true;
  let cappedAt: number | undefined;
  try {
    for await (const raw of lines) {
      lineNumber++;
      if (lineNumber < firstLine) continue;
      if (out.length >= limit) {
        reachedEnd = false;
        break;
      }
      const line = raw.length > READ_MAX_LINE_CHARS ? `${raw.slice(0, READ_MAX_LINE_CHARS)}… [line cut at ${READ_MAX_LINE_CHARS} characters]` : raw;
      const numbered = numberLine(lineNumber, line);
      bytes += Buffer.byteLength(numbered) + 1;
      if (bytes > READ_MAX_BYTES && out.length > 0) {
        cappedAt = lineNumber;
        reachedEnd = false;
        break;
      }
      out.push(numbered);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return { lines: out, firstLine, totalLines: reachedEnd ? lineNumber : undefined, cappedAt };
}

/** Reads the first bytes to refuse binary content before streaming lines of it. */
async function sniff(file: string): Promise<Uint8Array> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Read: a text file with `cat -n` line numbers; `offset` (1-based line) and `limit` page through
 * large files. Records what it read so Write and Edit can enforce the read-first rule.
 */
export const readTool = defineTool({
  name: 'Read',
  description: `Read a text file (absolute path, or relative to the working directory). Output has line numbers like \`cat -n\`. Reads up to ${READ_DEFAULT_LIMIT} lines from the start by default; for large files pass \`offset\` (the line to start at) and \`limit\` (how many lines). Lines longer than ${READ_MAX_LINE_CHARS} characters are cut. Directories and binary files are refused. Read a file before you Write over it or Edit it.`,
  inputSchema,
  risk: 'LOW',
  readOnly: true,
  permissionResource: (input, ctx) => (typeof input?.file_path === 'string' ? resolvePath(ctx.cwd, input.file_path) : undefined),
  execute: guardedExecute('Read', inputSchema, async (input, ctx) => {
    const file = resolvePath(ctx.cwd, input.file_path);
    let info;
    try {
      info = await stat(file);
    } catch (error) {
      if (isErrnoError(error) && error.code === 'ENOENT') {
        return errorResult(`File does not exist: ${file}. The working directory is ${ctx.cwd}; use Glob to find the file.`);
      }
      return errorResult(`Cannot read ${file}: ${describeFsError(error, file)}`);
    }
    if (info.isDirectory()) {
      return errorResult(`${file} is a directory, not a file. Use Glob (or Bash \`ls\`) to list what it contains.`);
    }
    if (!info.isFile()) {
      // Reading a FIFO or a device could block forever or never end.
      return errorResult(`${file} is not a regular file (a device, socket or pipe); Read only reads files.`);
    }
    if (hasBinaryExtension(file)) {
      return errorResult(`${file} is a binary file (by its extension) and cannot be read as text.`);
    }
    try {
      if (looksBinary(await sniff(file))) {
        return errorResult(`${file} looks like a binary file (it contains NUL bytes) and cannot be read as text.`);
      }
    } catch (error) {
      return errorResult(`Cannot read ${file}: ${describeFsError(error, file)}`);
    }
    const paged = input.offset !== undefined || input.limit !== undefined;
    if (!paged && info.size > READ_MAX_BYTES) {
      return errorResult(
        `${file} is ${Math.round(info.size / 1024)} KB, more than the ${READ_MAX_BYTES / 1024} KB Read returns at once. Pass offset and limit to read a part of it, or use Grep to find what you need.`,
      );
    }

    const firstLine = Math.max(1, input.offset ?? 1);
    const window = await readWindow(file, firstLine, input.limit ?? READ_DEFAULT_LIMIT);
    recordRead(ctx, file, info.mtimeMs);

    if (window.lines.length === 0) {
      if (window.totalLines === 0) return { content: `(${file} exists but is empty.)`, data: { path: file, lines: 0 } };
      return errorResult(`${file} has only ${window.totalLines} lines; offset ${firstLine} is past its end.`);
    }
    const lastLine = firstLine + window.lines.length - 1;
    let content = window.lines.join('\n');
    if (window.cappedAt !== undefined) {
      content += `\n\n[Output stopped at ${READ_MAX_BYTES / 1024} KB after line ${lastLine}. Read again with offset=${lastLine + 1} to continue.]`;
    } else if (window.totalLines === undefined) {
      content += `\n\n[Lines ${firstLine}-${lastLine} shown; the file continues. Read again with offset=${lastLine + 1} to see more.]`;
    }
    return { content, data: { path: file, firstLine, lastLine, totalLines: window.totalLines } };
  }),
});
