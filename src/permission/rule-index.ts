import { looseMatch } from './bash-pattern.js';
import { ruleCoversTool, type CompiledRule } from './rule.js';

/** The rules of one list (allow, ask or deny), indexed by tool and by a Bash rule's program. */
export class RuleIndex {
  readonly rules: CompiledRule[] = [];
  readonly tool: CompiledRule[] = [];
  readonly resource: CompiledRule[] = [];
  readonly readPaths: CompiledRule[] = [];
  readonly editPaths: CompiledRule[] = [];
  private readonly bashByProgram = new Map<string, CompiledRule[]>();
  private readonly bashWild: CompiledRule[] = [];

  constructor(rules: Iterable<CompiledRule> = []) {
    for (const rule of rules) this.add(rule);
  }

  add(rule: CompiledRule): void {
    this.rules.push(rule);
    if (rule.kind === 'tool') this.tool.push(rule);
    else if (rule.kind === 'resource') this.resource.push(rule);
    else if (rule.kind === 'path') (rule.toolLiteral === 'Read' ? this.readPaths : this.editPaths).push(rule);
    else if (rule.bash!.program === undefined) this.bashWild.push(rule);
    else {
      const list = this.bashByProgram.get(rule.bash!.program) ?? [];
      list.push(rule);
      this.bashByProgram.set(rule.bash!.program, list);
    }
  }

  get size(): number {
    return this.rules.length;
  }

  toolRule(toolName: string): CompiledRule | undefined {
    for (const rule of this.tool) if (ruleCoversTool(rule, toolName)) return rule;
    return undefined;
  }

  resourceRule(toolName: string, resource: string | undefined): CompiledRule | undefined {
    if (resource === undefined) return undefined;
    for (const rule of this.resource) if (ruleCoversTool(rule, toolName) && rule.resource!.test(resource)) return rule;
    return undefined;
  }

  /** Deny/ask: the first Bash rule matching these words under any flag spelling. */
  bashLoose(words: readonly string[]): CompiledRule | undefined {
    const program = words[0]?.toLowerCase() ?? '';
    for (const rule of this.bashByProgram.get(program) ?? []) if (looseMatch(rule.bash!, words)) return rule;
    for (const rule of this.bashWild) if (looseMatch(rule.bash!, words)) return rule;
    return undefined;
  }

  /** Allow: the first Bash rule matching these words exactly as written. */
  bashExact(words: readonly string[]): CompiledRule | undefined {
    const text = words.join(' ');
    for (const rule of this.bashByProgram.get(words[0]?.toLowerCase() ?? '') ?? []) if (rule.bash!.exact.test(text)) return rule;
    for (const rule of this.bashWild) if (rule.bash!.exact.test(text)) return rule;
    return undefined;
  }
}
