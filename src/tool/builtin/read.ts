import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { defineTool, type ToolResult } from '../types.js';
import { BINARY_SNIFF_BYTES, hasBinaryExtension, looksBinary } from './support/binary-file.js';
import { describeFsError, isErrnoError } from './support/fs-error.js';
import { errorResult, guardedExecute } from './support/guarded-execute.js';
import { recordRead } from './support/read-state.js';
import { resolvePath } from './support/resolve-path.js';

export const READ_DEFAULT_LIMIT = 2_000;
export const READ_MAX_LINE_CHARS = 2_000;
/** A whole-file read larger than this is refused; with offset/limit, output stops here. */
export const READ_MAX_BYTES = 256 * 1024;
/**
 * Files up to this size are read whole, with one read on the open descriptor: the common case
 * (source files) then costs open + fstat + read + close. Larger files can only be read with
 * offset/limit, and stream so that a 1 GB log costs only the lines asked for.
 */
export const READ_WHOLE_MAX_BYTES = READ_MAX_BYTES;

/**
 * O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever (fstat, which
 * refuses it, only comes after the open). It changes nothing for regular files. O_NOCTTY: opening
 * a terminal device must not make it this process's controlling terminal. Both are 0 on Windows.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

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

/**
 * Collects the lines of the window from the file's lines in order. Both ways of reading (whole,
 * streamed) feed it, so they number, cut and cap lines the same way.
 */
class WindowBuilder {
  private readonly out: string[] = [];
  private lineNumber = 0;
  private bytes = 0;
  private cappedAt: number | undefined;

  constructor(
    private readonly firstLine: number,
    private readonly limit: number,
  ) {}

  /** Takes the next line; false when the window is full and the rest of the file is not needed. */
  push(raw: string): boolean {
    this.lineNumber++;
    if (this.lineNumber < this.firstLine) return true;
    if (this.out.length >= this.limit) return false;
    const line = raw.length > READ_MAX_LINE_CHARS ? `${raw.slice(0, READ_MAX_LINE_CHARS)}… [line cut at ${READ_MAX_LINE_CHARS} characters]` : raw;
    const numbered = numberLine(this.lineNumber, line);
    this.bytes += Buffer.byteLength(numbered) + 1;
    if (this.bytes > READ_MAX_BYTES && this.out.length > 0) {
      this.cappedAt = this.lineNumber;
      return false;
    }
    this.out.push(numbered);
    return true;
  }

  /** `reachedEnd`: every line of the file was pushed (none was refused). */
  finish(reachedEnd: boolean): Window {
    return { lines: this.out, firstLine: this.firstLine, totalLines: reachedEnd ? this.lineNumber : undefined, cappedAt: this.cappedAt };
  }
}

/**
 * Line ends as readline (the streamed path) sees them: \r\n, \n, or a lone \r; a last line
 * without an end counts, an empty one after the last end does not.
 */
const LINE_END = /\r\n|\n|\r/;

function windowOfText(text: string, firstLine: number, limit: number): Window {
  const builder = new WindowBuilder(firstLine, limit);
  const lines = text.split(LINE_END);
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) if (!builder.push(line)) return builder.finish(false);
  return builder.finish(true);
}

/**
 * The whole file in one read (a short read, possible on some file systems, is continued). One byte
 * more than fstat's size is asked for: if it comes, the file is larger than fstat said (it grows, or
 * it is a /proc file whose size reads 0) and undefined tells the caller to stream it instead.
 */
async function readWhole(handle: FileHandle, size: number): Promise<Buffer | undefined> {
  const buffer = Buffer.allocUnsafe(size + 1);
  let length = 0;
  while (length < buffer.length) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
    // A read that stopped at fstat's size was at the end: asking again would only return 0.
    if (length === size) break;
  }
  return length === buffer.length ? undefined : buffer.subarray(0, length);
}

/** The first bytes, to refuse binary content before streaming lines of it. */
async function readHead(handle: FileHandle): Promise<Buffer> {
  const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead);
}

/** Streams the file from its start so a 1 GB log costs only the lines asked for. */
async function streamWindow(handle: FileHandle, firstLine: number, limit: number): Promise<Window> {
  // The caller closes the handle; the stream only reads from it.
  const stream = handle.createReadStream({ encoding: 'utf8', start: 0, autoClose: false });
  // node:readline is loaded here, not with this module: only a big file streams, and loading it
  // was part of every `sage run`'s start (the built-in tools are all loaded to be offered).
  const { createInterface } = createRequire(import.meta.url)('node:readline') as typeof import('node:readline');
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const builder = new WindowBuilder(firstLine, limit);
  try {
    for await (const raw of lines) if (!builder.push(raw)) return builder.finish(false);
  } finally {
    lines.close();
    stream.destroy();
  }
  return builder.finish(true);
}

/** The error result for a path that cannot be opened, by what the model can do about it. */
function openError(error: unknown, file: string, cwd: string): ToolResult {
  if (isErrnoError(error)) {
    switch (error.code) {
      case 'ENOENT':
        return errorResult(`File does not exist: ${file}. The working directory is ${cwd}; use Glob to find the file.`);
      case 'EISDIR':
        return directoryError(file);
      // A Unix socket cannot be opened (ENXIO); some special files refuse any open.
      case 'ENXIO':
      case 'EOPNOTSUPP':
        return notRegularError(file);
    }
  }
  return errorResult(`Cannot read ${file}: ${describeFsError(error, file)}`);
}

function directoryError(file: string): ToolResult {
  return errorResult(`${file} is a directory, not a file. Use Glob (or Bash \`ls\`) to list what it contains.`);
}

function notRegularError(file: string): ToolResult {
  // Reading a FIFO or a device could block forever or never end.
  return errorResult(`${file} is not a regular file (a device, socket or pipe); Read only reads files.`);
}

function binaryContentError(file: string): ToolResult {
  return errorResult(`${file} looks like a binary file (it contains NUL bytes) and cannot be read as text.`);
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
    // Opened first and checked with fstat on the descriptor: one open and, for a small file, one
    // read, instead of stat + open + read (binary sniff) + a stream's open and reads.
    let handle: FileHandle;
    try {
      handle = await open(file, OPEN_FLAGS);
    } catch (error) {
      return openError(error, file, ctx.cwd);
    }
    let window: Window | undefined;
    const firstLine = Math.max(1, input.offset ?? 1);
    try {
      const info = await handle.stat();
      if (info.isDirectory()) return directoryError(file);
      if (!info.isFile()) return notRegularError(file);
      if (hasBinaryExtension(file)) {
        return errorResult(`${file} is a binary file (by its extension) and cannot be read as text.`);
      }
      const paged = input.offset !== undefined || input.limit !== undefined;
      if (!paged && info.size > READ_MAX_BYTES) {
        return errorResult(
          `${file} is ${Math.round(info.size / 1024)} KB, more than the ${READ_MAX_BYTES / 1024} KB Read returns at once. Pass offset and limit to read a part of it, or use Grep to find what you need.`,
        );
      }
      const limit = input.limit ?? READ_DEFAULT_LIMIT;
      if (info.size <= READ_WHOLE_MAX_BYTES) {
        const whole = await readWhole(handle, info.size);
        if (whole) {
          if (looksBinary(whole)) return binaryContentError(file);
          window = windowOfText(whole.toString('utf8'), firstLine, limit);
        }
      }
      if (!window) {
        if (looksBinary(await readHead(handle))) return binaryContentError(file);
        window = await streamWindow(handle, firstLine, limit);
      }
      recordRead(ctx, file, info.mtimeMs);
    } catch (error) {
      return errorResult(`Cannot read ${file}: ${describeFsError(error, file)}`);
    } finally {
      await handle.close();
    }

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
