import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The project a folder belongs to: the nearest folder at or above `cwd` holding `.git` (a folder,
 * or a worktree's file), never above `bound` (the server's root that holds `cwd`). Without one:
 * `bound` when given — the operator's root is the workspace, and its rules must reach every
 * folder under it — else `cwd` alone, so a run in a folder outside any repository reads only that
 * folder's settings, as before, and never a stranger's up to `/`.
 */
export function findProjectRoot(cwd: string, bound?: string): string {
  const start = path.resolve(cwd);
  const limit = bound !== undefined && isInside(path.resolve(bound), start) ? path.resolve(bound) : undefined;
  for (let folder = start; ; folder = path.dirname(folder)) {
    if (existsSync(path.join(folder, '.git'))) return folder;
    if (folder === limit || path.dirname(folder) === folder) break;
  }
  return limit ?? start;
}

/**
 * `cwd` and each folder above it up to `root`, nearest first. A `root` that does not hold `cwd`
 * (a stored root from another layout) gives `cwd` alone.
 */
export function foldersUpTo(cwd: string, root: string): string[] {
  const start = path.resolve(cwd);
  const top = path.resolve(root);
  if (!isInside(top, start)) return [start];
  const folders: string[] = [];
  for (let folder = start; ; folder = path.dirname(folder)) {
    folders.push(folder);
    if (folder === top || path.dirname(folder) === folder) return folders;
  }
}

export function isInside(root: string, folder: string): boolean {
  const rel = path.relative(root, folder);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
