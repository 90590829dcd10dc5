import type { CallSubject } from './call-subject.js';
import type { PathSubject } from './path-subject.js';
import { isInside } from './path-resolver.js';
import type { CompiledRule } from './rule.js';
import type { RuleIndex } from './rule-index.js';

/** What the evaluation needs to know about where it runs. */
export interface EvaluationEnv {
  cwd: string;
  home: string;
  /** The project root and the additional directories. */
  roots: string[];
  /** Allow rules ignore case only on case-insensitive file systems. */
  caseInsensitiveFs: boolean;
}

export interface RuleHit {
  rule: CompiledRule;
  /** What matched, for the reason text. */
  subject: string;
  /** A deny that can only be suspected (a folder read recursively that may hold a denied file): ask instead. */
  suspected?: boolean;
}

/** Deny and ask lists: any matching part, path or layer hits; matching ignores case and sees through wrappers. */
export function restrictiveHit(index: RuleIndex, subject: CallSubject, env: EvaluationEnv): RuleHit | undefined {
  if (index.size === 0) return undefined;
  const toolRule = index.toolRule(subject.toolName);
  if (toolRule) return { rule: toolRule, subject: subject.toolName };
  const resourceRule = index.resourceRule(subject.toolName, subject.resource);
  if (resourceRule) return { rule: resourceRule, subject: subject.resource! };
  for (const command of subject.commands) {
    for (const layer of command.denyLayers) {
      const rule = index.bashLoose(layer);
      if (rule) return { rule, subject: layer.join(' ') };
    }
  }
  if (subject.shell?.parseError || subject.shell?.tooLong) {
    // The parser's recovery may have missed words; a crude split gets a second look so deny cannot fail open.
    for (const words of subject.shell.fallbackSegments) {
      const normalized = [words[0]!.replace(/^.*\//, '').toLowerCase(), ...words.slice(1)];
      for (let start = 0; start < normalized.length; start++) {
        const rule = index.bashLoose(start === 0 ? normalized : [normalized[start]!.replace(/^.*\//, '').toLowerCase(), ...normalized.slice(start + 1)]);
        if (rule) return { rule, subject: words.join(' ') };
      }
    }
  }
  const read = pathHit(index, 'read', [...subject.reads, ...subject.named], env);
  if (read) return read;
  // A folder read recursively or listed (`ls dir`), or written into (`mv x dir/`), is denied when what lies inside it is.
  const insideRead = pathHit(index, 'read', subject.reads.filter((p) => p.recursive || p.lists), env, true);
  if (insideRead) return insideRead;
  const write = pathHit(index, 'edit', subject.writes, env) ?? pathHit(index, 'edit', subject.writes, env, true);
  if (write) return write;
  // A path a Read rule denies may not be edited or created either (Claude Code: "covered by a Read deny rule").
  const readWrite = pathHit(index, 'read', subject.writes, env) ?? pathHit(index, 'read', subject.writes, env, true);
  if (readWrite) return readWrite;
  const named = pathHit(index, 'edit', subject.named, env);
  if (named) return { ...named, suspected: true };
  for (const p of subject.reads) {
    if (!p.recursive) continue;
    const rule = index.readPaths.find((r) => mayCoverBelow(r.path!.globFor(env.cwd), p.abs) || mayCoverBelow(r.path!.globFor(env.cwd), p.real));
    if (rule) return { rule, subject: `${p.raw} (read recursively)`, suspected: true };
  }
  for (const p of subject.writes) {
    if (!p.recursive) continue;
    const rule = [...index.editPaths, ...index.readPaths].find((r) => mayCoverBelow(r.path!.globFor(env.cwd), p.abs) || mayCoverBelow(r.path!.globFor(env.cwd), p.real));
    if (rule) return { rule, subject: `${p.raw} (changed recursively)`, suspected: true };
  }
  return undefined;
}

function pathHit(index: RuleIndex, family: 'read' | 'edit', paths: PathSubject[], env: EvaluationEnv, probeInside = false): RuleHit | undefined {
  if ((family === 'read' ? index.readPaths : index.editPaths).length === 0) return undefined;
  const suffix = probeInside ? '/\u0000' : '';
  // A deny needs either the link or its target to match; lexical paths first, real paths (a syscall) after.
  for (const side of ['abs', 'real'] as const) {
    for (const p of paths) {
      const candidate = p[side] + suffix;
      if (side === 'real' && p.real === p.abs) continue;
      for (const rule of index.pathCandidates(family, candidate, env.cwd)) {
        if (rule.path!.matches(candidate, env.cwd, true)) return { rule, subject: p.raw };
      }
    }
  }
  return undefined;
}

/** Could an absolute glob match something inside `dir`? (Its fixed prefix and `dir` overlap.) */
function mayCoverBelow(glob: string, dir: string): boolean {
  const cut = glob.search(/[*?[{]/);
  const fixed = (cut < 0 ? glob : glob.slice(0, cut)).toLowerCase();
  const d = dir.toLowerCase();
  return fixed.startsWith(`${d}/`) || fixed === d || d.startsWith(fixed.endsWith('/') ? fixed : `${fixed}/`) || fixed === '/' || fixed === '';
}

export interface AllowCoverage {
  covered: boolean;
  hits: CompiledRule[];
  /** What no allow rule covers, for suggestions and reasons. */
  uncovered: string[];
}

export function insideRoots(p: PathSubject, env: EvaluationEnv): boolean {
  return env.roots.some((r) => isInside(p.abs, r, env.caseInsensitiveFs)) && env.roots.some((r) => isInside(p.real, r, env.caseInsensitiveFs));
}

/**
 * An allow needs both the link and its target to match. Outside the working directories only a
 * rule that names a folder counts: `Read`, `Read(*)` or `Read(*.key)` do not open `~/.ssh`.
 */
function pathAllowed(index: RuleIndex, family: 'read' | 'edit', p: PathSubject, env: EvaluationEnv, outside: boolean, toolName: string): CompiledRule | undefined {
  if ((family === 'read' ? index.readPaths : index.editPaths).length === 0) return undefined;
  const tool = toolName === 'Bash' ? 'Edit' : toolName;
  return index.pathCandidates(family, p.abs, env.cwd).find((r) => (r.onlyTool === undefined || r.onlyTool === tool) && (!outside || !r.path!.anywhere) && r.path!.matches(p.abs, env.cwd, env.caseInsensitiveFs) && r.path!.matches(p.real, env.cwd, env.caseInsensitiveFs));
}

/** Allow list: every part, read and write must be covered, and at least one rule must have done it. */
export function allowCoverage(index: RuleIndex, subject: CallSubject, env: EvaluationEnv): AllowCoverage {
  const result: AllowCoverage = { covered: false, hits: [], uncovered: [] };
  if (index.size === 0) return result;
  // A tool-wide rule (`Grep`, `mcp__x`) covers the call, but not paths outside the working directories.
  const toolRule = index.toolRule(subject.toolName) ?? index.resourceRule(subject.toolName, subject.resource);
  if (toolRule && subject.reads.every((p) => insideRoots(p, env)) && subject.writes.every((p) => insideRoots(p, env))) return { covered: true, hits: [toolRule], uncovered: [] };
  const byRule = subject.commands.map((command) => {
    if (toolRule) return true;
    if (!command.allowWords) {
      result.uncovered.push(command.part.argv.map((w) => w.value).join(' '));
      return false;
    }
    const rules = command.allowWords.map((words) => index.bashExact(words));
    // `find -delete` / `-exec`: only a rule without a wildcard (the exact command) covers it, never `Bash(find *)`.
    if (rules.every((r) => r !== undefined) && (!command.exactOnly || rules.every((r) => !/(^|[^\\])\*/.test(r.bash!.specifier)))) {
      result.hits.push(...(rules as CompiledRule[]));
      return true;
    }
    if (!command.readOnly) result.uncovered.push(command.part.argv.map((w) => w.value).join(' '));
    return false;
  });
  // A command's own allow rule covers what it reads inside the working directories only: `Bash(cat *)` does not allow `cat ~/.bashrc`.
  for (const p of subject.reads) {
    const inside = insideRoots(p, env);
    const rule = pathAllowed(index, 'read', p, env, !inside, subject.toolName);
    if (rule) result.hits.push(rule);
    else if (inside && (toolRule || (p.owner !== undefined && (byRule[p.owner] || subject.commands[p.owner]!.readOnly)))) continue;
    else result.uncovered.push(`read ${p.raw}`);
  }
  for (const p of subject.writes) {
    const rule = pathAllowed(index, 'edit', p, env, !insideRoots(p, env), subject.toolName);
    if (rule) result.hits.push(rule);
    else if (insideRoots(p, env) && (toolRule || (p.owner !== undefined && !p.redirect && byRule[p.owner]))) continue;
    else result.uncovered.push(`write ${p.raw}`);
  }
  if (toolRule) result.hits.unshift(toolRule);
  result.covered = result.uncovered.length === 0 && result.hits.length > 0;
  return result;
}
