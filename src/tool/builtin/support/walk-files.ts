import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';

/** Never worth walking: version-control internals and installed dependencies. */
export const ALWAYS_SKIPPED = new Set(['.git', 'node_modules']);

export interface WalkOptions {
  /** Absolute directory to walk. */
  root: string;
  signal?: AbortSignal;
  /** Whether to enter a directory, by its path relative to root (posix separators). */
  enterDir?: (relativePath: string) => boolean;
}

export interface WalkedFile {
  path: string;
  /** Relative to the walk's root, with `/` separators. */
  relativePath: string;
}

interface IgnoreScope {
  /** Absolute directory the .gitignore sits in; its patterns are relative to it. */
  base: string;
  matcher: Ignore;
}

async function loadGitignore(dir: string): Promise<IgnoreScope | undefined> {
  try {
    const text = await readFile(path.join(dir, '.gitignore'), 'utf8');
    return { base: dir, matcher: ignore().add(text) };
  } catch {
    return undefined;
  }
}

/**
 * The .gitignore files above the root that still apply to it: up to the repository's top (the
 * first ancestor holding `.git`), as git itself reads them.
 */
async function ancestorScopes(root: string): Promise<IgnoreScope[]> {
  const dirs: string[] = [];
  let dir = root;
  for (;;) {
    const parent = path.dirname(dir);
    const isRepoTop = await stat(path.join(dir, '.git')).then(() => true, () => false);
    if (isRepoTop || parent === dir) break;
    dir = parent;
    dirs.unshift(dir);
  }
  const scopes = await Promise.all(dirs.map(loadGitignore));
  return scopes.filter((scope): scope is IgnoreScope => scope !== undefined);
}

/** The deepest .gitignore with an opinion wins, so a nested `!keep.log` can undo a parent's rule. */
function isIgnored(scopes: readonly IgnoreScope[], absolutePath: string, isDir: boolean): boolean {
  for (let i = scopes.length - 1; i >= 0; i--) {
    const scope = scopes[i]!;
    const relative = path.relative(scope.base, absolutePath).split(path.sep).join('/');
    if (relative === '' || relative.startsWith('..')) continue;
    const verdict = scope.matcher.test(isDir ? `${relative}/` : relative);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

/**
 * Lists the files under a directory, respecting .gitignore files (the root's, nested ones, and
 * those above it within the repository) and skipping `.git` and `node_modules`. Symbolic links are
 * not followed, as ripgrep does not, so a link loop cannot trap the walk. Unreadable directories
 * are skipped and reported in `errors`.
 */
export async function walkFiles(options: WalkOptions): Promise<{ files: WalkedFile[]; errors: NodeJS.ErrnoException[] }> {
  const files: WalkedFile[] = [];
  const errors: NodeJS.ErrnoException[] = [];
  const rootScopes = await ancestorScopes(options.root);

  async function visit(dir: string, relativeDir: string, scopes: readonly IgnoreScope[]): Promise<void> {
    if (options.signal?.aborted) return;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      // The root's own error is the caller's to report; below it, skip what cannot be read.
      if (relativeDir === '') throw error;
      errors.push(error as NodeJS.ErrnoException);
      return;
    }
    let here = scopes;
    if (entries.some((entry) => entry.name === '.gitignore' && entry.isFile())) {
      const scope = await loadGitignore(dir);
      if (scope) here = [...scopes, scope];
    }
    const subdirs: Promise<void>[] = [];
    for (const entry of entries) {
      if (ALWAYS_SKIPPED.has(entry.name)) continue;
      const absolute = path.join(dir, entry.name);
      const relative = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (isIgnored(here, absolute, true)) continue;
        if (options.enterDir && !options.enterDir(relative)) continue;
        subdirs.push(visit(absolute, relative, here));
      } else if (entry.isFile()) {
        if (!isIgnored(here, absolute, false)) files.push({ path: absolute, relativePath: relative });
      }
    }
    await Promise.all(subdirs);
  }

  await visit(options.root, '', rootScopes);
  return { files, errors };
}

/** Orders paths component by component, as `rg --sort path` does (`a/b` before `a-c`). */
export function comparePaths(a: string, b: string): number {
  const pa = a.split(/[\\/]/);
  const pb = b.split(/[\\/]/);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  }
  return pa.length - pb.length;
}
