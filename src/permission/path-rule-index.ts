import type { CompiledRule } from './rule.js';

interface Built {
  byDir: Map<string, CompiledRule[]>;
  byName: Map<string, CompiledRule[]>;
  generic: CompiledRule[];
  /** Candidates per path already looked up (a pure function of the path and the rules). */
  memo: Map<string, CompiledRule[]>;
}

const MEMO_LIMIT = 4096;

const GLOB_OR_ESCAPE = /[*?[{\\(!+@]/;

/**
 * Path rules bucketed by the fixed folder in front of their first glob character (or, for a bare
 * name such as `.env`, by that name), so a lookup costs the depth of the path, not the number of
 * rules. Buckets are keyed lower-case: the lookup returns a superset and the rule's own matcher decides.
 */
export class PathRuleIndex {
  private readonly perCwd = new Map<string, Built>();
  private readonly order = new Map<CompiledRule, number>();
  constructor(private readonly rules: readonly CompiledRule[]) {
    rules.forEach((rule, i) => this.order.set(rule, i));
  }

  candidates(absolute: string, cwd: string): CompiledRule[] {
    if (this.rules.length <= 8) return this.rules as CompiledRule[];
    const built = this.build(cwd);
    let hit = built.memo.get(absolute);
    if (hit === undefined) {
      hit = this.lookup(built, absolute);
      if (built.memo.size >= MEMO_LIMIT) built.memo.clear();
      built.memo.set(absolute, hit);
    }
    return hit;
  }

  private lookup(built: Built, absolute: string): CompiledRule[] {
    const p = absolute.toLowerCase();
    const found = new Set<CompiledRule>(built.generic);
    let start = 0;
    for (;;) {
      const slash = p.indexOf('/', start + 1);
      const segment = p.slice(start + 1, slash < 0 ? undefined : slash);
      for (const r of built.byName.get(segment) ?? []) found.add(r);
      const dir = p.slice(0, slash < 0 ? p.length : slash) || '/';
      for (const r of built.byDir.get(dir) ?? []) found.add(r);
      if (slash < 0) break;
      start = slash;
    }
    for (const r of built.byDir.get('/') ?? []) found.add(r);
    if (found.size === this.rules.length) return this.rules as CompiledRule[];
    // In the rules' own order (the first match is the one reported), without walking every rule.
    return [...found].sort((a, b) => this.order.get(a)! - this.order.get(b)!);
  }

  private build(cwd: string): Built {
    let built = this.perCwd.get(cwd);
    if (built) return built;
    built = { byDir: new Map(), byName: new Map(), generic: [], memo: new Map() };
    const push = (map: Map<string, CompiledRule[]>, key: string, rule: CompiledRule) => map.set(key, [...(map.get(key) ?? []), rule]);
    for (const rule of this.rules) {
      const glob = rule.path!.globFor(cwd).normalize('NFC');
      // `/**/name` and `/**/name/…` can only match a path with a `name` segment.
      const first = glob.startsWith('/**/') ? glob.slice(4).split('/')[0]! : undefined;
      if (first !== undefined && first.length > 0 && !GLOB_OR_ESCAPE.test(first)) {
        push(built.byName, first.toLowerCase(), rule);
        continue;
      }
      const cut = glob.search(GLOB_OR_ESCAPE);
      const fixed = cut < 0 ? glob : glob.slice(0, cut);
      const dir = fixed.slice(0, fixed.lastIndexOf('/')).toLowerCase();
      if (dir.length <= 1) built.generic.push(rule);
      else push(built.byDir, dir, rule);
    }
    if (this.perCwd.size > 16) this.perCwd.clear();
    this.perCwd.set(cwd, built);
    return built;
  }
}
