import { compileBashPattern, type BashPattern } from './bash-pattern.js';
import { PermissionRuleError } from './errors.js';
import { compilePathPattern, type PathPattern } from './path-pattern.js';
import type { PermissionBehavior } from './types.js';

/** Where a rule came from; `/path` specifiers are anchored at `root`. */
export interface RuleOrigin {
  /** A settings file path, `session`, `cli`, `user:<id>`, `managed`… */
  source: string;
  root: string;
}

export interface ParsedRule {
  raw: string;
  tool: string;
  specifier?: string;
}

export interface CompiledRule extends ParsedRule {
  behavior: PermissionBehavior;
  origin: RuleOrigin;
  /** Literal tool name, or undefined for a tool-name glob (`mcp__github__*`). */
  toolLiteral?: string;
  toolGlob?: RegExp;
  kind: 'tool' | 'bash' | 'path' | 'resource';
  bash?: BashPattern;
  path?: PathPattern;
  /** Seed 003's `tool(arg_pattern)`: a glob over the tool's permission resource. */
  resource?: RegExp;
}

/** Tools whose rules are gitignore-style path patterns. Write(path) is read as Edit(path). */
export const READ_FAMILY = new Set(['Read', 'Grep', 'Glob', 'LS', 'NotebookRead']);
export const EDIT_FAMILY = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
export const BUILTIN_TOOLS = new Set(['Bash', 'Read', 'Write', 'Edit', 'MultiEdit', 'Glob', 'Grep', 'AskUserQuestion', 'Task', 'Skill', 'WebFetch', 'WebSearch', 'NotebookEdit', 'NotebookRead', 'LS', 'TodoWrite', 'ExitPlanMode']);

/** Splits `Tool` or `Tool(specifier)`; throws PermissionRuleError on anything else. */
export function parseRule(raw: string): ParsedRule {
  const text = raw.trim();
  const open = text.indexOf('(');
  const tool = open < 0 ? text : text.slice(0, open);
  if (!/^[A-Za-z0-9_*.-]+$/.test(tool)) throw new PermissionRuleError(raw, 'a rule is Tool or Tool(specifier), with a tool name of letters, digits, _ . - or *');
  if (open < 0) return { raw: text, tool };
  if (!text.endsWith(')')) throw new PermissionRuleError(raw, 'the specifier must end with ")"');
  const specifier = text.slice(open + 1, -1);
  if (specifier.trim().length === 0) throw new PermissionRuleError(raw, 'the specifier between the parentheses is empty; write the tool name alone to match every call');
  // `Bash(*)` and `Read(**)`-like catch-alls are the same as the bare tool name.
  return specifier.trim() === '*' ? { raw: text, tool } : { raw: text, tool, specifier };
}

/** Parses and compiles a rule for one list (allow, ask, deny). */
export function compileRule(raw: string, behavior: PermissionBehavior, origin: RuleOrigin, home: string): CompiledRule {
  const parsed = parseRule(raw);
  const base: CompiledRule = { ...parsed, behavior, origin, kind: 'tool' };
  if (parsed.tool.includes('*')) {
    // Allow rules may only glob after a literal MCP server, so a stray `*` cannot allow every tool.
    if (behavior === 'allow' && !/^mcp__[^*_]+(?:_[^*_]+)*__/.test(parsed.tool)) {
      throw new PermissionRuleError(raw, 'an allow rule may only use * in the tool name after a literal mcp__server__ prefix');
    }
    base.toolGlob = new RegExp(`^${parsed.tool.replace(/[.+?^${}()|[\]\\-]/g, '\\$&').replace(/\*/g, '.*')}$`);
  } else {
    base.toolLiteral = parsed.tool === 'Write' || parsed.tool === 'MultiEdit' ? 'Edit' : parsed.tool;
  }
  // A bare `Read` or `Edit` covers every path, so it also governs shell readers and writers.
  if (parsed.specifier === undefined && (parsed.tool === 'Read' || EDIT_FAMILY.has(parsed.tool))) {
    return { ...base, kind: 'path', path: compilePathPattern('//**', origin.root, home) };
  }
  if (parsed.specifier === undefined) return base;
  if (parsed.tool === 'Glob' || parsed.tool === 'Grep' || parsed.tool === 'LS') {
    throw new PermissionRuleError(raw, `${parsed.tool}(path) is never consulted; write Read(${parsed.specifier}), which governs ${parsed.tool} too`);
  }
  if (parsed.tool === 'Bash') return { ...base, kind: 'bash', bash: compileBashPattern(parsed.specifier) };
  if (parsed.tool === 'Read' || EDIT_FAMILY.has(parsed.tool)) {
    return { ...base, kind: 'path', path: compilePathPattern(parsed.specifier, origin.root, home) };
  }
  const glob = parsed.specifier.replace(/[.+^${}()|[\]\\/-]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return { ...base, kind: 'resource', resource: new RegExp(`^${glob}$`, behavior === 'allow' ? 's' : 'si') };
}

/** Does the rule's tool name cover this tool? Write/MultiEdit calls are Edit calls to rules. */
export function ruleCoversTool(rule: CompiledRule, toolName: string): boolean {
  if (rule.toolLiteral !== undefined) return rule.toolLiteral === ruleToolName(toolName);
  return rule.toolGlob!.test(toolName);
}

export function ruleToolName(toolName: string): string {
  return toolName === 'Write' || toolName === 'MultiEdit' ? 'Edit' : toolName;
}
