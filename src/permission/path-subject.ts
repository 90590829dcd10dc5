import { absolutePath, RealPathScope, type PathContext } from './path-resolver.js';

/** A path a call touches, lexically normalised (`abs`) and with symlinks resolved (`real`). */
export interface PathSubject {
  raw: string;
  abs: string;
  readonly real: string;
  /** Walks a whole folder (Grep, `grep -r`), so a denied file below it could be read. */
  recursive: boolean;
  /** Lists a folder (`ls dir`): denied when a Read deny covers everything inside it. */
  lists?: boolean;
  /** Index of the shell command it belongs to; undefined for redirections and file tools. */
  owner?: number;
  /** Written by a redirection (`>`), which only Edit rules may allow. */
  redirect?: boolean;
}

/** Where a path subject resolves symlinks; each decision has its own (real paths are never kept). */
export interface PathContextWithScope extends PathContext {
  scope?: RealPathScope;
}

export class LazyPathSubject implements PathSubject {
  recursive = false;
  lists?: boolean;
  owner?: number;
  redirect?: boolean;
  private resolved: string | undefined;
  constructor(
    readonly raw: string,
    readonly abs: string,
    /** The unnormalised absolute text the kernel would resolve. */
    readonly joined: string,
    private readonly scope: RealPathScope,
  ) {}

  // Resolved on first use: many words never need it (no path rule, or decided earlier).
  get real(): string {
    return (this.resolved ??= this.scope.resolve(this.joined));
  }

  /** The same lexical path, resolved afresh in another decision's scope. */
  rebind(scope: RealPathScope): LazyPathSubject {
    const copy = new LazyPathSubject(this.raw, this.abs, this.joined, scope);
    copy.recursive = this.recursive;
    if (this.lists) copy.lists = true;
    if (this.owner !== undefined) copy.owner = this.owner;
    if (this.redirect !== undefined) copy.redirect = this.redirect;
    return copy;
  }
}

export function pathSubject(raw: string, ctx: PathContextWithScope, extra: Partial<Omit<PathSubject, 'real'>> = {}): PathSubject {
  const abs = absolutePath(raw, ctx);
  // The real path is resolved from the unnormalised text, so `link/..` goes where the kernel goes.
  const joined = raw.startsWith('/') || raw.startsWith('~') || raw.startsWith('$') ? abs : `${ctx.cwd}/${raw.normalize('NFC')}`;
  const subject = new LazyPathSubject(raw, abs, joined, ctx.scope ?? new RealPathScope());
  if (extra.recursive !== undefined) subject.recursive = extra.recursive;
  if (extra.lists) subject.lists = true;
  if (extra.owner !== undefined) subject.owner = extra.owner;
  if (extra.redirect !== undefined) subject.redirect = extra.redirect;
  return subject;
}
