import path from 'node:path';
import { absolutePath, realPath, type PathContext } from './path-resolver.js';
import { READ_FAMILY, EDIT_FAMILY } from './rule.js';
import { LruCache } from './lru-cache.js';
import { analyzeShell, type ShellAnalysis } from './shell-analysis.js';
import { commandSubjects, type CommandSubject } from './command-subject.js';

/** A path a call touches, lexically normalised (`abs`) and with symlinks resolved (`real`). */
export interface PathSubject {
  raw: string;
  abs: string;
  readonly real: string;
  /** Walks a whole folder (Grep, `grep -r`), so a denied file below it could be read. */
  recursive: boolean;
  /** Index of the shell command it belongs to; undefined for redirections and file tools. */
  owner?: number;
  /** Written by a redirection (`>`), which only Edit rules may allow. */
  redirect?: boolean;
}

/** Everything the rules look at, extracted once per call. */
export interface CallSubject {
  toolName: string;
  shell?: ShellAnalysis;
  commands: CommandSubject[];
  reads: PathSubject[];
  writes: PathSubject[];
  /** Words that merely name a path (any argument, literals inside inline code): denied paths deny. */
  named: PathSubject[];
  /** Reasons no rule, hook or default may allow this call (only bypass mode may). */
  hard: string[];
  /** The working directory changes to a place only known when the command runs. */
  unknownCwd: boolean;
  /** Generic tools: the tool's permission resource, for `Tool(pattern)` rules. */
  resource?: string;
}

const analyses = new LruCache<string, ShellAnalysis>(2048);

/** Parses (cached per command string; the analysis does not depend on the working directory). */
export function analyzeCached(command: string): ShellAnalysis {
  let analysis = analyses.get(command);
  if (!analysis) {
    analysis = analyzeShell(command);
    analyses.set(command, analysis);
  }
  return analysis;
}

export function pathSubject(raw: string, ctx: PathContext, extra: Partial<PathSubject> = {}): PathSubject {
  const abs = absolutePath(raw, ctx);
  // The real path is resolved from the unnormalised text, so `link/..` goes where the kernel goes.
  const joined = raw.startsWith('/') || raw.startsWith('~') || raw.startsWith('$') ? abs : `${ctx.cwd}/${raw.normalize('NFC')}`;
  let real: string | undefined;
  // Resolved on first use: many words never need it (no path rule, or decided earlier).
  return {
    raw, abs, recursive: false, ...extra,
    get real() {
      return (real ??= realPath(joined));
    },
  };
}

const PATH_FIELDS = ['file_path', 'notebook_path', 'path'] as const;

export function buildSubject(toolName: string, input: unknown, ctx: PathContext, resource: string | undefined): CallSubject {
  const subject: CallSubject = { toolName, commands: [], reads: [], writes: [], named: [], hard: [], unknownCwd: false, resource };
  const fields = (input ?? {}) as Record<string, unknown>;
  if (toolName === 'Bash') {
    const command = typeof fields.command === 'string' ? fields.command : '';
    const shell = analyzeCached(command);
    subject.shell = shell;
    commandSubjects(shell, ctx, subject);
    return subject;
  }
  const family = READ_FAMILY.has(toolName) ? 'read' : EDIT_FAMILY.has(toolName) ? 'write' : undefined;
  if (!family) return subject;
  const recursive = toolName === 'Grep' || toolName === 'Glob';
  let sawPath = false;
  for (const field of PATH_FIELDS) {
    const value = fields[field];
    if (typeof value !== 'string' || value.length === 0) continue;
    sawPath = true;
    (family === 'read' ? subject.reads : subject.writes).push(pathSubject(value, ctx, { recursive }));
  }
  if (recursive && !sawPath) subject.reads.push(pathSubject('.', ctx, { recursive }));
  if (toolName === 'Glob' && typeof fields.pattern === 'string') {
    // A Glob pattern can itself point elsewhere (`../../etc/*`); its fixed prefix is what it reads.
    const fixed = fields.pattern.split('/').filter((_s, i, all) => !/[*?[{]/.test(all.slice(0, i + 1).join('/'))).join('/');
    if (fixed.length > 0) subject.reads.push(pathSubject(fixed, { ...ctx, cwd: subject.reads[0]?.abs ?? ctx.cwd }, { recursive: true }));
  }
  if (family === 'write' && subject.writes.length === 0) subject.hard.push(`${toolName} was called without a file path`);
  return subject;
}

export function isUnder(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}
