import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** Where relative paths, `~` and `$HOME` point. */
export interface PathContext {
  cwd: string;
  home: string;
}

/**
 * Turns a path as written (relative, `~/…`, `$HOME/…`, with `.` and `..`) into an absolute,
 * normalised, NFC path. Nothing on disk is consulted.
 */
export function absolutePath(raw: string, ctx: PathContext): string {
  let p = raw.normalize('NFC');
  if (p === '~' || p.startsWith('~/')) p = ctx.home + p.slice(1);
  else p = p.replace(/^\$\{?HOME\}?(?=\/|$)/, ctx.home).replace(/^\$\{?PWD\}?(?=\/|$)/, ctx.cwd);
  return path.resolve(ctx.cwd, p).normalize('NFC');
}

/**
 * The real path: symlinks resolved through the nearest ancestor that exists, the rest appended.
 * A file that does not exist yet inside a symlinked folder still lands where the link points.
 */
export function realPath(absolute: string): string {
  // Walk up with existsSync (no exception per missing level: throwing is slow), then resolve once.
  let dir = absolute;
  const rest: string[] = [];
  while (!existsSync(dir)) {
    const parent = path.dirname(dir);
    if (parent === dir) return absolute;
    rest.push(path.basename(dir));
    dir = parent;
  }
  let real: string;
  try {
    real = realpathSync.native(dir);
  } catch {
    return absolute;
  }
  return (rest.length ? path.join(real, ...rest.reverse()) : real).normalize('NFC');
}

/** Is `p` the folder `root` or inside it? */
export function isInside(p: string, root: string, nocase = false): boolean {
  const a = nocase ? p.toLowerCase() : p;
  const b = nocase ? root.toLowerCase() : root;
  return a === b || a.startsWith(b.endsWith(path.sep) ? b : b + path.sep);
}

/** Platforms whose default file systems ignore case; allow rules only ignore case there. */
export function defaultCaseInsensitive(): boolean {
  return process.platform === 'darwin' || process.platform === 'win32';
}
