import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { InvalidInputError } from '../errors/index.js';

/** The largest script file read: a script is a few turns of JSON, and /dev/zero must not fill memory. */
export const MAX_SCRIPT_BYTES = 1024 * 1024;

/** Why a script file was not read; callers that face a client show none of it (see RunPolicy). */
export type ScriptFileProblem = 'outside' | 'missing' | 'not_a_file' | 'too_large' | 'unreadable';

const DESCRIBE: Record<ScriptFileProblem, string> = {
  outside: 'it is not inside an allowed folder',
  missing: 'ENOENT (it does not exist)',
  not_a_file: 'it is not a regular file',
  too_large: `it is larger than ${MAX_SCRIPT_BYTES} bytes`,
  unreadable: 'it cannot be read',
};

/** A script file that was not read, with the reason as a code. The message never holds the file's bytes. */
export class ScriptFileError extends InvalidInputError {
  constructor(
    readonly problem: ScriptFileProblem,
    readonly path: string,
    detail = DESCRIBE[problem],
  ) {
    super(`Cannot read the script ${path}: ${detail}`);
  }
}

export interface ReadScriptOptions {
  /** Cap on the file's size, bytes; default MAX_SCRIPT_BYTES. */
  maxBytes?: number;
  /** When set, the file's real path (symlinks resolved) must be inside one of these real folders. */
  within?: readonly string[];
}

/** Whether `path` is `root` or inside it; both must already be absolute and real. */
export function isInsideFolder(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Reads a script file safely: resolved with realpath (a symlink cannot lead out of `within`),
 * stat'ed before it is opened (a device, a FIFO or a folder is refused without opening it, so
 * `/dev/zero` is never read and a FIFO never blocks), opened without following a symlink swapped
 * in since, checked again on the open descriptor, and read at most `maxBytes + 1` bytes.
 */
export function readScriptFile(path: string, options: ReadScriptOptions = {}): { realPath: string; text: string } {
  const max = options.maxBytes ?? MAX_SCRIPT_BYTES;
  const shown = resolve(path);
  let real: string;
  try {
    real = realpathSync(shown);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScriptFileError(code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable', shown);
  }
  if (options.within && !options.within.some((root) => isInsideFolder(root, real))) throw new ScriptFileError('outside', shown);
  let before;
  try {
    before = statSync(real);
  } catch {
    throw new ScriptFileError('unreadable', shown);
  }
  if (!before.isFile()) throw new ScriptFileError('not_a_file', shown);
  if (before.size > max) throw new ScriptFileError('too_large', shown, `it is larger than ${max} bytes`);
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw new ScriptFileError((error as NodeJS.ErrnoException).code === 'ELOOP' ? 'not_a_file' : 'unreadable', shown);
  }
  try {
    const after = fstatSync(fd);
    // Another file put in its place between the stat and the open is not read.
    if (!after.isFile() || after.ino !== before.ino || after.dev !== before.dev) throw new ScriptFileError('not_a_file', shown);
    // Read at most one byte past the cap: a file that grew after the stat is still cut off.
    const buffer = Buffer.allocUnsafe(Math.min(max, after.size) + 1);
    let total = 0;
    while (total < buffer.length) {
      const n = readSync(fd, buffer, total, buffer.length - total, null);
      if (n === 0) break;
      total += n;
    }
    if (total > max) throw new ScriptFileError('too_large', shown, `it is larger than ${max} bytes`);
    if (total > after.size) throw new ScriptFileError('unreadable', shown, 'it changed while it was read');
    return { realPath: real, text: buffer.subarray(0, total).toString('utf8') };
  } catch (error) {
    if (error instanceof ScriptFileError) throw error;
    throw new ScriptFileError('unreadable', shown);
  } finally {
    closeSync(fd);
  }
}

/**
 * Where a JSON syntax error is, as "line L, column C", from the offset V8 reports — never the
 * text around it, which is the file's content (the first bytes of /etc/passwd, once).
 */
export function jsonErrorPlace(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : '';
  if (/Unexpected end of JSON input/.test(message)) return 'it ends early';
  const at = /at position (\d+)/.exec(message);
  if (!at) return 'a syntax error';
  const offset = Math.min(Number(at[1]), text.length);
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      column = 1;
    } else column++;
  }
  return `a syntax error at line ${line}, column ${column}`;
}
