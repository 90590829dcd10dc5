import { looseMatch } from './bash-pattern.js';
import { PathRuleIndex } from './path-rule-index.js';
import { mcpServer, ruleCoversTool, ruleToolName, type CompiledRule } from './rule.js';

/** The rules of one list (allow, ask or deny), indexed by tool and by a Bash rule's program. */
export class RuleIndex {
  readonly rules: CompiledRule[] = [];
  readonly tool: CompiledRule[] = [];
  readonly resource: CompiledRule[] = [];
  readonly readPaths: CompiledRule[] = [];
  readonly editPaths: CompiledRule[] = [];
  // The maps are made with their first entry: most lists of a run are empty (a server holds five
  // per waiting run, and empty maps are a visible part of a waiting chat's memory).
  private bashByProgram?: Map<string, CompiledRule[]>;
  private readonly bashWild: CompiledRule[] = [];
  private toolByName?: Map<string, CompiledRule[]>;
  private toolByGlobPrefix?: Map<string, CompiledRule[]>;
  private pathIndexes?: { read: PathRuleIndex; edit: PathRuleIndex };
  /** toolRule answers per tool name (dropped when a rule is added). */
  private toolMemo?: Map<string, CompiledRule | null>;
  /** bashExact / bashLoose answers per word list (the lists of a cached command are the same arrays each time). */
  private exactMemo?: WeakMap<readonly string[], CompiledRule | null>;
  private looseMemo?: WeakMap<readonly string[], CompiledRule | null>;

  constructor(rules: Iterable<CompiledRule> = []) {
    for (const rule of rules) this.add(rule);
  }

  add(rule: CompiledRule): void {
    this.rules.push(rule);
    this.pathIndexes = undefined;
    this.toolMemo = undefined;
    this.exactMemo = undefined;
    this.looseMemo = undefined;
    if (rule.kind === 'tool') {
      this.tool.push(rule);
      const key = rule.toolLiteral ?? rule.tool.slice(0, rule.tool.indexOf('*'));
      const map = rule.toolLiteral !== undefined ? (this.toolByName ??= new Map()) : (this.toolByGlobPrefix ??= new Map());
      map.set(key, [...(map.get(key) ?? []), rule]);
    }
    else if (rule.kind === 'resource') this.resource.push(rule);
    else if (rule.kind === 'path') (rule.toolLiteral === 'Read' ? this.readPaths : this.editPaths).push(rule);
    else if (rule.bash!.program === undefined) this.bashWild.push(rule);
    else {
      const byProgram = (this.bashByProgram ??= new Map());
      const list = byProgram.get(rule.bash!.program) ?? [];
      list.push(rule);
      byProgram.set(rule.bash!.program, list);
    }
  }

  get size(): number {
    return this.rules.length;
  }

  toolRule(toolName: string): CompiledRule | undefined {
    if (this.tool.length === 0) return undefined;
    const memos = (this.toolMemo ??= new Map());
    let memo = memos.get(toolName);
    if (memo === undefined) {
      memo = this.findToolRule(toolName) ?? null;
      if (memos.size > 1024) memos.clear();
      memos.set(toolName, memo);
    }
    return memo ?? undefined;
  }

  private findToolRule(toolName: string): CompiledRule | undefined {
    const literal = this.toolByName?.get(ruleToolName(toolName))?.[0];
    if (literal) return literal;
    // `mcp__github` is a server-level rule: it covers every tool of that server.
    const server = mcpServer(toolName);
    const serverRule = server === undefined ? undefined : this.toolByName?.get(server)?.[0];
    if (serverRule) return serverRule;
    // Tool-name globs are bucketed by the text before their first `*`; try every prefix of the name.
    for (let i = 0; i <= toolName.length; i++) {
      for (const rule of this.toolByGlobPrefix?.get(toolName.slice(0, i)) ?? []) if (ruleCoversTool(rule, toolName)) return rule;
    }
    return undefined;
  }

  /** Path rules that may match an absolute path (a superset; each rule's matcher decides). */
  pathCandidates(family: 'read' | 'edit', absolute: string, cwd: string): CompiledRule[] {
    this.pathIndexes ??= { read: new PathRuleIndex(this.readPaths), edit: new PathRuleIndex(this.editPaths) };
    return this.pathIndexes[family].candidates(absolute, cwd);
  }

  resourceRule(toolName: string, resource: string | undefined): CompiledRule | undefined {
    if (resource === undefined) return undefined;
    for (const rule of this.resource) if (ruleCoversTool(rule, toolName) && rule.resource!.test(resource)) return rule;
    return undefined;
  }

  /** Deny/ask: the first Bash rule matching these words under any flag spelling. */
  bashLoose(words: readonly string[]): CompiledRule | undefined {
    if (!this.bashByProgram && this.bashWild.length === 0) return undefined;
    const memos = (this.looseMemo ??= new WeakMap());
    let memo = memos.get(words);
    if (memo === undefined) {
      memo = this.findLoose(words) ?? null;
      memos.set(words, memo);
    }
    return memo ?? undefined;
  }

  private findLoose(words: readonly string[]): CompiledRule | undefined {
    const program = words[0]?.toLowerCase() ?? '';
    for (const rule of this.bashByProgram?.get(program) ?? []) if (looseMatch(rule.bash!, words)) return rule;
    for (const rule of this.bashWild) if (looseMatch(rule.bash!, words)) return rule;
    return undefined;
  }

  /** Allow: the first Bash rule matching these words exactly as written. */
  bashExact(words: readonly string[]): CompiledRule | undefined {
    if (!this.bashByProgram && this.bashWild.length === 0) return undefined;
    const memos = (this.exactMemo ??= new WeakMap());
    let memo = memos.get(words);
    if (memo === undefined) {
      memo = this.findExact(words) ?? null;
      memos.set(words, memo);
    }
    return memo ?? undefined;
  }

  private findExact(words: readonly string[]): CompiledRule | undefined {
    const text = words.join(' ');
    for (const rule of this.bashByProgram?.get(words[0]?.toLowerCase() ?? '') ?? []) if (rule.bash!.exact.test(text)) return rule;
    for (const rule of this.bashWild) if (rule.bash!.exact.test(text)) return rule;
    return undefined;
  }
}
