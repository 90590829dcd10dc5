import { compileBashPattern, type BashPattern } from './bash-pattern.js';
import { PermissionRuleError } from './errors.js';
import { compilePathPattern, type PathPattern } from './path-pattern.js';
import { unmatchableCharacter } from './rule-characters.js';
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
  /**
   * A bare `Edit`, `Write`, `MultiEdit` or `NotebookEdit` allow rule: Claude Code reads it as a rule
   * for that one tool (Bash redirects are checked as Edit), while `Edit(path)` covers them all.
   */
  onlyTool?: string;
  /** `Tool(pattern)`: a glob over the tool's permission resource (or `WebFetch(domain:…)`'s host check). */
  resource?: { test(resource: string): boolean };
}

/** Tools whose rules are gitignore-style path patterns. Write(path) is read as Edit(path). */
export const READ_FAMILY = new Set(['Read', 'Grep', 'Glob', 'LS', 'NotebookRead']);
export const EDIT_FAMILY = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
export const BUILTIN_TOOLS = new Set(['Bash', 'Read', 'Write', 'Edit', 'MultiEdit', 'Glob', 'Grep', 'AskUserQuestion', 'Task', 'Agent', 'Skill', 'SlashCommand', 'WebFetch', 'WebSearch', 'NotebookEdit', 'NotebookRead', 'LS', 'TodoWrite', 'ExitPlanMode', 'PowerShell', 'BashOutput', 'KillShell']);

/** Claude Code's names for the same tool: `Agent` is today's name of `Task`; Write and MultiEdit are Edit to rules. */
const TOOL_ALIASES: Record<string, string> = { Write: 'Edit', MultiEdit: 'Edit', Agent: 'Task' };

/**
 * Claude Code ignores `Write(path)` allow rules (it warns at load): a write is allowed by an Edit
 * rule. Sage does the same, so a Write allow copied from a Claude Code project never allows more
 * there than it does here. Deny and ask Write rules still apply, as Edit rules.
 */
export function isIgnoredAllowRule(parsed: ParsedRule, behavior: PermissionBehavior): boolean {
  // `Write(*)` is a path rule too (the parser reads it as the bare tool name).
  return behavior === 'allow' && parsed.tool === 'Write' && (parsed.specifier !== undefined || parsed.raw.includes('('));
}

/** An ignored rule is kept (listed and reported) but matches nothing. */
const NEVER_PATH: PathPattern = { specifier: '', matches: () => false, globFor: () => '/\u0000', anywhere: true };

/** Splits `Tool` or `Tool(specifier)`; throws PermissionRuleError on anything else. */
export function parseRule(raw: string): ParsedRule {
  const unmatchable = unmatchableCharacter(raw);
  if (unmatchable) throw new PermissionRuleError(raw, unmatchable);
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
    base.toolLiteral = TOOL_ALIASES[parsed.tool] ?? parsed.tool;
  }
  // A bare `Read` or `Edit` covers every path, so it also governs shell readers and writers.
  if (parsed.specifier === undefined && (parsed.tool === 'Read' || EDIT_FAMILY.has(parsed.tool))) {
    if (isIgnoredAllowRule(parsed, behavior)) return { ...base, kind: 'path', path: NEVER_PATH };
    const rule: CompiledRule = { ...base, kind: 'path', path: compilePathPattern('//**', origin.root, home) };
    if (behavior === 'allow' && parsed.tool !== 'Read') rule.onlyTool = parsed.tool;
    return rule;
  }
  if (parsed.specifier === undefined) return base;
  if (parsed.tool === 'Glob' || parsed.tool === 'Grep' || parsed.tool === 'LS') {
    throw new PermissionRuleError(raw, `${parsed.tool}(path) is never consulted; write Read(${parsed.specifier}), which governs ${parsed.tool} too`);
  }
  if (parsed.tool === 'Bash') return { ...base, kind: 'bash', bash: compileBashPattern(parsed.specifier) };
  if (isIgnoredAllowRule(parsed, behavior)) return { ...base, kind: 'path', path: NEVER_PATH };
  if (parsed.tool === 'Read' || EDIT_FAMILY.has(parsed.tool)) {
    return { ...base, kind: 'path', path: compilePathPattern(parsed.specifier, origin.root, home, behavior !== 'allow') };
  }
  if (parsed.tool === 'WebFetch' && parsed.specifier.startsWith('domain:')) {
    return { ...base, kind: 'resource', resource: domainMatcher(raw, parsed.specifier.slice('domain:'.length), behavior) };
  }
  const glob = parsed.specifier.replace(/[.+^${}()|[\]\\/-]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return { ...base, kind: 'resource', resource: new RegExp(`^${glob}$`, behavior === 'allow' ? 's' : 'si') };
}

/**
 * `WebFetch(domain:example.com)`: the URL's host is that name; `domain:*.example.com`: a subdomain
 * of it (deny and ask rules also cover the bare domain). A URL that cannot be read matches a deny
 * or ask rule and never an allow rule.
 */
function domainMatcher(raw: string, domain: string, behavior: PermissionBehavior): { test(resource: string): boolean } {
  const wanted = domain.trim().toLowerCase().replace(/\.$/, '');
  const wildcard = wanted.startsWith('*.');
  const base = wildcard ? wanted.slice(2) : wanted;
  if (base.length === 0 || /[*/:@\s]/.test(base)) throw new PermissionRuleError(raw, 'a domain rule names a host such as domain:example.com or domain:*.example.com');
  return {
    test(resource) {
      let host: string;
      try {
        host = new URL(resource).hostname.toLowerCase().replace(/\.$/, '');
      } catch {
        return behavior !== 'allow';
      }
      if (host === base) return !wildcard || behavior !== 'allow';
      return wildcard && host.endsWith(`.${base}`);
    },
  };
}

/** Does the rule's tool name cover this tool? Write/MultiEdit calls are Edit calls to rules; `mcp__server` covers its tools. */
export function ruleCoversTool(rule: CompiledRule, toolName: string): boolean {
  if (rule.toolLiteral !== undefined) return rule.toolLiteral === ruleToolName(toolName) || rule.toolLiteral === mcpServer(toolName);
  return rule.toolGlob!.test(toolName);
}

export function ruleToolName(toolName: string): string {
  return TOOL_ALIASES[toolName] ?? toolName;
}

/** `mcp__github__get_issue` → `mcp__github` (the server-level rule name); undefined for other tools. */
export function mcpServer(toolName: string): string | undefined {
  if (!toolName.startsWith('mcp__')) return undefined;
  const end = toolName.indexOf('__', 5);
  return end > 5 ? toolName.slice(0, end) : undefined;
}
