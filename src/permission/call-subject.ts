import path from 'node:path';
import { RealPathScope, type PathContext } from './path-resolver.js';
import { READ_FAMILY, EDIT_FAMILY } from './rule.js';
import { LruCache } from './lru-cache.js';
import { analyzeShell, type ShellAnalysis } from './shell-analysis.js';
import { commandSubjects, type CommandSubject } from './command-subject.js';
import { expandGlob } from './glob-expansion.js';
import { LazyPathSubject, pathSubject, type PathContextWithScope, type PathSubject } from './path-subject.js';

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
  /**
   * Variables the call sets that change which program runs or what it loads (`PATH`, `LD_PRELOAD`,
   * `GIT_CONFIG_*`…): HIGH risk, and, like `hard`, nothing but bypass mode allows the call.
   */
  dangerousEnv?: string[];
  /** The working directory changes to a place only known when the command runs. */
  unknownCwd: boolean;
  /** Generic tools: the tool's permission resource, for `Tool(pattern)` rules. */
  resource?: string;
  /** Glob arguments of a Bash command, matched against the disk for each decision. */
  globs?: GlobWord[];
}

/** A glob argument (`cat .en?`): what it matches on disk is named (and read or written, for a reader or a writer). */
export interface GlobWord {
  pattern: string;
  cwd: string;
  owner: number;
  read: boolean;
  /** The program writes its arguments (`rm`, `touch`): what the pattern matches is written. */
  write: boolean;
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

const PATH_FIELDS = ['file_path', 'notebook_path', 'path'] as const;

/**
 * What a command line means in a working directory is a pure function of the text, the folder and
 * home (nothing on disk), so it is cached; only the real paths, which are, are resolved per decision.
 */
interface Template {
  cwd: string;
  home: string;
  subject: CallSubject;
}
/** Per context object (the engine keeps one per working directory), then per command text. */
const bashTemplates = new WeakMap<PathContext, LruCache<string, Template>>();

function templateFor(command: string, ctx: PathContext, scope: RealPathScope): CallSubject {
  let cache = bashTemplates.get(ctx);
  if (!cache) {
    cache = new LruCache<string, Template>(512);
    bashTemplates.set(ctx, cache);
  }
  const hit = cache.get(command);
  // Checked again in case the caller changed the object's folders.
  if (hit && hit.cwd === ctx.cwd && hit.home === ctx.home) return hit.subject;
  const subject: CallSubject = { toolName: 'Bash', commands: [], reads: [], writes: [], named: [], hard: [], unknownCwd: false, resource: undefined };
  const shell = analyzeCached(command);
  subject.shell = shell;
  commandSubjects(shell, { cwd: ctx.cwd, home: ctx.home, scope }, subject);
  cache.set(command, { cwd: ctx.cwd, home: ctx.home, subject });
  return subject;
}

function rebindAll(paths: PathSubject[], scope: RealPathScope): PathSubject[] {
  const out = new Array<PathSubject>(paths.length);
  for (let i = 0; i < paths.length; i++) out[i] = (paths[i] as LazyPathSubject).rebind(scope);
  return out;
}

export function buildSubject(toolName: string, input: unknown, ctx: PathContext, resource: string | undefined): CallSubject {
  const scope = new RealPathScope();
  const fields = (input ?? {}) as Record<string, unknown>;
  if (toolName === 'Bash') {
    const command = typeof fields.command === 'string' ? fields.command : '';
    const template = templateFor(command, ctx, scope);
    const subject: CallSubject = {
      toolName, shell: template.shell, commands: template.commands.slice(), hard: template.hard.slice(), unknownCwd: template.unknownCwd, resource,
      ...(template.dangerousEnv ? { dangerousEnv: template.dangerousEnv.slice() } : {}),
      reads: rebindAll(template.reads, scope), writes: rebindAll(template.writes, scope), named: rebindAll(template.named, scope),
    };
    if (template.globs) expandGlobs(template.globs, subject, { cwd: ctx.cwd, home: ctx.home, scope });
    return subject;
  }
  const subject: CallSubject = { toolName, commands: [], reads: [], writes: [], named: [], hard: [], unknownCwd: false, resource };
  const family = READ_FAMILY.has(toolName) ? 'read' : EDIT_FAMILY.has(toolName) ? 'write' : undefined;
  if (!family) return subject;
  const pctx: PathContextWithScope = { cwd: ctx.cwd, home: ctx.home, scope };
  const recursive = toolName === 'Grep' || toolName === 'Glob';
  let sawPath = false;
  for (const field of PATH_FIELDS) {
    const value = fields[field];
    if (typeof value !== 'string' || value.length === 0) continue;
    sawPath = true;
    (family === 'read' ? subject.reads : subject.writes).push(pathSubject(value, pctx, { recursive }));
  }
  if (recursive && !sawPath) subject.reads.push(pathSubject('.', pctx, { recursive }));
  if (toolName === 'Glob' && typeof fields.pattern === 'string') {
    // A Glob pattern can itself point elsewhere (`../../etc/*`); its fixed prefix is what it reads.
    const fixed = fields.pattern.split('/').filter((_s, i, all) => !/[*?[{]/.test(all.slice(0, i + 1).join('/'))).join('/');
    if (fixed.length > 0) subject.reads.push(pathSubject(fixed, { ...pctx, cwd: subject.reads[0]?.abs ?? ctx.cwd }, { recursive: true }));
  }
  if (family === 'write' && subject.writes.length === 0) subject.hard.push(`${toolName} was called without a file path`);
  return subject;
}

/** What each glob argument matches now; a pattern too big to expand cannot be approved without a person. */
function expandGlobs(globs: GlobWord[], subject: CallSubject, pctx: PathContextWithScope): void {
  for (const glob of globs) {
    const matches = expandGlob(glob.pattern, glob.cwd, pctx.home);
    if (matches === undefined) {
      subject.hard.push(`the pattern ${glob.pattern} matches too many files to check against the rules`);
      continue;
    }
    for (const match of matches) {
      const p = pathSubject(match, pctx, { owner: glob.owner });
      subject.named.push(p);
      if (glob.read) subject.reads.push(p);
      if (glob.write) subject.writes.push(p);
    }
  }
}

export function isUnder(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}
