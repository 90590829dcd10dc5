import path from 'node:path';
import picomatch from 'picomatch';
import { PermissionRuleError } from './errors.js';

/** A compiled gitignore-style path specifier of a Read / Edit rule. */
export interface PathPattern {
  specifier: string;
  /** Does an absolute path (or a folder above it) match? */
  matches(absolute: string, cwd: string, nocase: boolean): boolean;
  /** The absolute glob for a working directory, for "could this cover something under X" checks. */
  globFor(cwd: string): string;
  /** The pattern names no particular folder (`Read`, `Read(*)`, `Read(*.ts)`): it may match anywhere on disk. */
  anywhere: boolean;
}

/** Escapes glob characters so a saved path matches only itself. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]{}()!+@\\]/g, '\\$&');
}

/**
 * `path` or `./path`: from the working directory; `/path`: from the settings file's root;
 * `//path`: absolute; `~/path`: home; a bare name (no slash) matches at any depth.
 * `anyDepth` (deny and ask rules): a relative pattern (`./.env`, `secrets/**`) also matches at any
 * depth, as Claude Code's deny rules do, so `config/.env` is covered by `Read(./.env)`.
 */
export function compilePathPattern(specifier: string, root: string, home: string, anyDepth = false): PathPattern {
  let spec = specifier.trim().normalize('NFC');
  if (spec.length === 0) throw new PermissionRuleError(specifier, 'the path pattern is empty');
  if (anyDepth && !spec.startsWith('/') && !spec.startsWith('~') && !/(^|\/)\.\.(\/|$)/.test(spec)) {
    const rest = spec.replace(/^(\.\/)+/, '');
    if (rest.length > 0 && rest !== '.') spec = `//**/${rest}`;
  }
  const cache = new Map<string, { cs: RegExp; ci: RegExp; glob: string }>();
  const compiled = (cwd: string) => {
    let entry = cache.get(cwd);
    if (!entry) {
      const glob = toAbsoluteGlob(spec, root, home, cwd);
      // A pattern that names a folder covers everything inside it, as in .gitignore.
      const withChildren = `${glob}{,/**}`;
      try {
        entry = {
          cs: picomatch.makeRe(withChildren, { dot: true }),
          ci: picomatch.makeRe(withChildren, { dot: true, nocase: true }),
          glob,
        };
      } catch (cause) {
        throw new PermissionRuleError(specifier, `not a valid path pattern (${String(cause)})`);
      }
      if (cache.size > 64) cache.clear();
      cache.set(cwd, entry);
    }
    return entry;
  };
  const rootGlob = compiled(root).glob;
  const cut = rootGlob.search(/[*?[{]/);
  return {
    specifier,
    anywhere: cut >= 0 && rootGlob.slice(0, cut).replace(/\/+$/, '') === '',
    matches: (absolute, cwd, nocase) => (nocase ? compiled(cwd).ci : compiled(cwd).cs).test(absolute),
    globFor: (cwd) => compiled(cwd).glob,
  };
}

function toAbsoluteGlob(spec: string, root: string, home: string, cwd: string): string {
  let glob: string;
  if (spec.startsWith('//')) glob = spec.slice(1);
  else if (spec === '~' || spec.startsWith('~/')) glob = escapeGlob(home) + spec.slice(1);
  else if (spec.startsWith('/')) glob = escapeGlob(trimSlash(root)) + spec;
  else if (spec.startsWith('./')) glob = `${escapeGlob(trimSlash(cwd))}/${spec.slice(2)}`;
  else if (spec.replace(/\/+$/, '').includes('/')) glob = `${escapeGlob(trimSlash(cwd))}/${spec}`;
  else glob = `/**/${spec}`;
  glob = glob.replace(/\/+$/, '');
  // `../x` from the working directory is a plain absolute path once `..` is resolved.
  if (/(^|\/)\.\.(\/|$)/.test(glob)) glob = path.posix.normalize(glob);
  return glob.length === 0 ? '/**' : glob;
}

function trimSlash(p: string): string {
  return p.length > 1 ? p.replace(/\/+$/, '') : '';
}
