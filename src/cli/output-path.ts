import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from './usage-error.js';

/**
 * Checks up front that `--trajectory FILE` can be appended to: a folder, a file under a file or an
 * unwritable file would otherwise fail only when the first event is written, after the run did
 * its work. Creates the file (and its folder), as the run would.
 */
export function checkTrajectoryPath(path: string): string {
  const file = resolve(path);
  if (isDirectory(file)) throw new UsageError(`--trajectory ${file} is a folder; give a file path, e.g. ${file.replace(/\/$/, '')}/run.jsonl.`);
  const blocker = fileInTheWay(file);
  if (blocker) throw new UsageError(`--trajectory ${file} cannot be created: ${blocker} is a file, not a folder.`);
  try {
    makeFolders(dirname(file));
    closeSync(openSync(file, 'a'));
  } catch (error) {
    throw new UsageError(`--trajectory ${file} cannot be written (${reason(error)}).`);
  }
  return file;
}

/**
 * Checks up front that `--db FILE` names a SQLite file that can be created or written: a folder, a
 * path under a file, or a read-only place is a usage error that names the flag.
 */
export function checkDbPath(path: string): string {
  const file = resolve(path);
  if (isDirectory(file)) throw new UsageError(`--db ${file} is a folder; give a database file path, e.g. ${file.replace(/\/$/, '')}/sage.db.`);
  const blocker = fileInTheWay(file);
  if (blocker) throw new UsageError(`--db ${file} cannot be created: ${blocker} is a file, not a folder.`);
  try {
    // The store would create the folders too; made here, a place where they cannot be is said now.
    makeFolders(dirname(file));
    accessSync(exists(file) ? file : dirname(file), constants.W_OK);
  } catch (error) {
    throw new UsageError(`--db ${file} cannot be written (${reason(error)}).`);
  }
  return file;
}

/**
 * Creates the missing folders of `dir` one at a time. (`mkdirSync(…, { recursive: true })` never
 * returns for a path under /proc on Node 20: it loops on ENOENT.)
 */
function makeFolders(dir: string): void {
  const missing: string[] = [];
  for (let at = dir; !exists(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  for (const folder of missing) mkdirSync(folder);
}

function nearestExisting(file: string): string {
  let existing = file;
  while (!exists(existing) && dirname(existing) !== existing) existing = dirname(existing);
  return existing;
}

/** The file that stands where a folder of `file`'s path would have to be, if any. */
function fileInTheWay(file: string): string | undefined {
  const existing = nearestExisting(file);
  return existing !== file && !isDirectory(existing) ? existing : undefined;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const known: Record<string, string> = { EACCES: 'permission denied', EPERM: 'not permitted', EISDIR: 'it is a folder', ENOTDIR: 'a part of the path is a file, not a folder', EROFS: 'read-only file system' };
  return (code && known[code]) ?? (error instanceof Error ? error.message : String(error));
}
