import { existsSync, lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
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

/** An empty, `.` or `..` segment, or a trailing slash. */
const ODD_SEGMENT = /\/\.{0,2}(?:\/|$)/;

/** Absolute, no empty, `.` or `..` segment, no trailing slash: safe to split at the last slash. */
function isPlainAbsolute(p: string): boolean {
  return p.length > 1 && p.charCodeAt(0) === 47 && !ODD_SEGMENT.test(p);
}

// Any UTF-16 code unit above ASCII (surrogate halves included), written without control characters for the linter.
const NON_ASCII = /[\u0080-\uffff]/;
/** NFC; ASCII text is NFC already (and ICU is slow to say so). */
function nfc(s: string): string {
  return NON_ASCII.test(s) ? s.normalize('NFC') : s;
}

/**
 * Real paths for one decision. Nothing is kept between decisions (a symlink created after one
 * decision is seen by the next); within one decision the folders a call's paths share are resolved
 * once, and each path costs one lstat: a path that is not itself a symlink is where its folder
 * really is, plus its name, exactly what `realPath` returns, with fewer syscalls.
 */
export class RealPathScope {
  // A call touches a handful of paths: small arrays beat Maps (no hash table per decision).
  private readonly keys: string[] = [];
  private readonly values: string[] = [];

  resolve(joined: string): string {
    return this.memo(joined, false);
  }

  private memo(p: string, isDir: boolean): string {
    // Folders and leaves resolve to the same real path, so one table serves both.
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) if (keys[i] === p) return this.values[i]!;
    const real = isDir ? realDir(p) : this.compute(p);
    keys.push(p);
    this.values.push(real);
    return real;
  }

  private compute(joined: string): string {
    // `x/.` is `x` itself, wherever it leads; anything else unusual goes the kernel's way.
    if (joined.endsWith('/.') && isPlainAbsolute(joined.slice(0, -2))) return this.memo(joined.slice(0, -2), true);
    if (!isPlainAbsolute(joined)) return realPath(joined);
    let stats: Stats | undefined;
    try {
      stats = lstatSync(joined, { throwIfNoEntry: false });
    } catch {
      stats = undefined; // ENOTDIR and the like: as realPath does, resolve the folder and append the name.
    }
    if (stats?.isSymbolicLink()) return linkTarget(joined);
    const slash = joined.lastIndexOf('/');
    const dir = this.memo(slash === 0 ? '/' : joined.slice(0, slash), true);
    return nfc(`${dir === '/' ? '' : dir}/${joined.slice(slash + 1)}`);
  }
}

/**
 * Where a symlink leads. A dangling link is followed to the path it names (writing through it
 * creates that file there), not taken for a new file beside the link.
 */
function linkTarget(link: string, depth = 0): string {
  try {
    return nfc(realpathSync.native(link));
  } catch {}
  let target: string;
  try {
    target = readlinkSync(link);
  } catch {
    return realPath(link);
  }
  const next = path.resolve(realPath(path.dirname(link)), target);
  if (depth >= 40) return realPath(next); // a loop: the kernel gives up too (ELOOP)
  let stats: Stats | undefined;
  try {
    stats = lstatSync(next, { throwIfNoEntry: false });
  } catch {}
  return stats?.isSymbolicLink() ? linkTarget(next, depth + 1) : realPath(next);
}

/** realPath for a folder that usually exists: one realpath call, the walk up only when it fails. */
function realDir(dir: string): string {
  try {
    return nfc(realpathSync.native(dir));
  } catch {
    return realPath(dir);
  }
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

/**
 * Does the path, or a folder on its way inside one of the roots, go through a symlink whose target
 * does not exist? (lstat sees the link; existsSync follows it and finds nothing.)
 */
export function throughDanglingLink(absolute: string, roots: readonly string[]): boolean {
  for (let p = absolute; roots.some((r) => p !== r && isInside(p, r)); p = path.dirname(p)) {
    let stats: Stats | undefined;
    try {
      stats = lstatSync(p, { throwIfNoEntry: false });
    } catch {
      continue;
    }
    if (stats?.isSymbolicLink() && !existsSync(p)) return true;
  }
  return false;
}

/** Is the path itself a symbolic link (live or dangling)? */
export function isSymlink(absolute: string): boolean {
  try {
    return lstatSync(absolute, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    return false;
  }
}
