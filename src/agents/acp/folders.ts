import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * Whether `path` is inside one of the session's folders (its cwd and additional directories),
 * after resolving `..` and symlinks (of the path, or of its nearest existing parent for a file not
 * written yet). A file request outside them is refused, never asked: the agent has no business there.
 */
export function insideFolders(path: string, folders: readonly string[]): boolean {
  if (!isAbsolute(path)) return false;
  const real = realOf(resolve(path));
  return folders.some((folder) => {
    const root = realOf(resolve(folder));
    const rel = relative(root, real);
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
  });
}

/** The real path of `path`, or of its nearest existing parent joined with the rest. */
function realOf(path: string): string {
  let existing = path;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = dirname(existing);
    if (parent === existing) return path;
    rest.unshift(existing.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
    existing = parent;
  }
  const real = realpathSync(existing);
  return rest.length ? resolve(real, ...rest) : real;
}
