import path from 'node:path';
import { FILE_EDIT_COMMANDS, LISTERS, READERS, READ_ONLY_COMMANDS, RECURSIVE_READERS, WRITERS, isHarmlessEnv } from './command-lists.js';
import { absolutePath, type PathContext } from './path-resolver.js';
import type { ShellAnalysis, ShellPart } from './shell-analysis.js';
import { MAX_COMMAND_LENGTH, MAX_PARTS } from './shell-analysis.js';
import { programName } from './shell-wrappers.js';
import type { ShellWord } from './shell-words.js';
import type { CallSubject } from './call-subject.js';
import { pathSubject, type PathContextWithScope, type PathSubject } from './path-subject.js';
import { expandBraces, hasGlob } from './glob-expansion.js';
import { changesWhatRuns, environmentChange } from './environment-variables.js';

/** One shell command as the rules see it. */
export interface CommandSubject {
  part: ShellPart;
  /** Each layer with the program name reduced to its base name, for deny and ask rules. */
  denyLayers: string[][];
  /** Word lists that must each be allowed; undefined when no allow rule may cover this command. */
  allowWords: string[][] | undefined;
  program: string;
  readOnly: boolean;
  fileEdit: boolean;
  /** `rm` of `/`, the home folder, the project root or its parents: asked in every mode. */
  critical?: string;
  /** Only an allow rule without a wildcard may cover it (`find -delete`, `find -exec`). */
  exactOnly?: boolean;
}

const FIND_ACTIONS = new Set(['-delete', '-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls']);

const EXEMPT_TARGETS = /^\/dev\/(null|stdout|stderr|stdin|tty|fd\/\d+)$/;
const SCRIPT_FIRST = new Set(['grep', 'egrep', 'fgrep', 'rg', 'sed', 'awk', 'jq']);

export function commandSubjects(shell: ShellAnalysis, ctx: PathContextWithScope, subject: CallSubject): void {
  if (shell.parseError) subject.hard.push('the command could not be parsed completely');
  if (shell.hiddenChars) subject.hard.push('the command contains invisible or bidirectional control characters');
  if (shell.tooLong) subject.hard.push(`the command is longer than ${MAX_COMMAND_LENGTH} characters`);
  if (shell.tooManyParts) subject.hard.push(`the command has more than ${MAX_PARTS} parts`);
  for (const form of shell.forms) subject.hard.push(form);
  const cwds = workingDirectories(shell.parts, ctx, subject);
  const isAnchored = (raw: string) => raw.startsWith('/') || raw.startsWith('~') || /^\$\{?(HOME|PWD)\b/.test(raw);
  const resolve = (raw: string, extra: Partial<PathSubject>): PathSubject[] =>
    isAnchored(raw) ? [pathSubject(raw, ctx, extra)] : cwds.map((cwd) => pathSubject(raw, { ...ctx, cwd }, extra));
  const dynamicArgs = new Set<string>();
  let changedDir = false;

  shell.parts.forEach((part, index) => {
    const inner = part.layers.at(-1)!;
    const program = programName(inner[0]).toLowerCase();
    const args = inner.slice(1).map((w) => w.value);
    const command = describe(part, program, args, ctx);
    subject.commands.push(command);
    if (part.opaque) subject.hard.push(part.opaque);
    const env = environmentChange(part);
    for (const name of env.names) if (changesWhatRuns(name) && !subject.dangerousEnv?.includes(name)) (subject.dangerousEnv ??= []).push(name);
    // `env -C DIR cat x` reads DIR/x, not the x these paths are judged from.
    if (env.chdir) subject.hard.push('env -C runs the command in another folder, so its paths cannot be judged from this one');
    // `scripts/../../x/run.sh` is not inside `scripts/`, whatever a `Bash(scripts/*)` rule says.
    for (const layer of part.layers) if (/(^|\/)\.\.(\/|$)/.test(layer[0]?.value ?? '')) subject.hard.push(`the program path ${layer[0]!.value} climbs out with ..`);
    // `$VAR`, `${HOME}`, `$( … )` in an argument: what runs is only known when it runs.
    for (const word of part.argv.slice(1)) if (word.dynamic) dynamicArgs.add(word.value);
    if (program === 'git' && changedDir) subject.hard.push('git runs after a cd, in a folder whose repository config and hooks may differ');
    // `git -c alias.p=push p`, `-c core.pager=…`: config on the command line can rename or run anything.
    if (program === 'git' && gitCommandLineConfig(args)) subject.hard.push('git is given configuration on the command line (-c / --config-env), which can define aliases or run programs');
    if (program === 'cd' || program === 'pushd') {
      const target = inner.slice(1).find((w) => !w.value.startsWith('-'));
      // The folder it enters is read (a Read deny applies) and must lie inside the working directories.
      if (target && !target.dynamic) subject.reads.push(...resolve(target.value, { owner: index }));
      if (!target || target.dynamic || absolutePath(target.value, ctx) !== ctx.cwd) changedDir = true;
      if (!target) subject.reads.push(pathSubject(ctx.home, ctx, { owner: index }));
    }
    const reader = READERS.has(program);
    const writer = WRITERS[program] !== undefined && WRITERS[program]!.targets !== 'none';
    for (const word of part.argv.slice(1)) {
      for (const raw of namedValues(word)) subject.named.push(...resolve(raw, { owner: index }));
      if (!word.brace && !word.glob) continue;
      // A pattern may expand to a denied file (`cat .en?`, `cat .{env,x}`): literal spellings are
      // checked here, patterns against the disk for each decision.
      for (const alt of word.brace ? expandBraces(word.value) ?? [word.value] : [word.value]) {
        if (word.glob && hasGlob(alt)) {
          for (const cwd of isAnchored(alt) ? [ctx.cwd] : cwds) (subject.globs ??= []).push({ pattern: alt, cwd, owner: index, read: reader, write: writer });
        } else if (alt !== word.value) {
          subject.named.push(...resolve(alt, { owner: index }));
          if (reader) subject.reads.push(...resolve(alt, { owner: index }));
          if (writer) subject.writes.push(...resolve(alt, { owner: index }));
        }
      }
      if (word.brace && expandBraces(word.value) === undefined) subject.hard.push(`the brace expansion ${word.value} is too large to check`);
    }
    if (part.inlineCode) for (const raw of codeLiterals(part.inlineCode)) subject.named.push(...resolve(raw, { owner: index }));
    const recursive = RECURSIVE_READERS[program]?.(args) ?? false;
    const lists = LISTERS.has(program);
    for (const raw of readTargets(program, args)) subject.reads.push(...resolve(raw, { owner: index, recursive, lists }));
    // A recursive removal or mode change reaches everything below its target.
    const recursiveWrite = program === 'find' || ((program === 'rm' || program === 'chmod' || program === 'chown' || program === 'chgrp') && args.some((a) => /^-[a-zA-Z]*[rR]/.test(a) || a === '--recursive'));
    for (const raw of writeTargets(program, args)) subject.writes.push(...resolve(raw, { owner: index, recursive: recursiveWrite }));
  });
  for (const value of dynamicArgs) subject.hard.push(`the argument ${value} is only known when the command runs`);
  for (const redirect of shell.redirects) {
    const target = redirect.target;
    if (redirect.op.includes('&') && /^(\d+|-)$/.test(target.value)) continue;
    if (EXEMPT_TARGETS.test(target.value)) continue;
    if (/^\/dev\/(tcp|udp)\//.test(target.value)) subject.hard.push(`the command opens a network connection through ${target.value}`);
    if (target.dynamic) subject.hard.push(`the command redirects to ${target.value}, which is only known when it runs`);
    if (target.glob || target.brace) subject.hard.push(`the command redirects to the pattern ${target.value}`);
    const list = redirect.op.startsWith('<') ? subject.reads : subject.writes;
    list.push(...resolve(target.value, { redirect: !redirect.op.startsWith('<') }));
  }
}

function describe(part: ShellPart, program: string, args: string[], ctx: PathContext): CommandSubject {
  const denyLayers = [...part.layers, ...part.denyOnly].map((layer) => [programName(layer[0]).toLowerCase(), ...layer.slice(1).map((w) => w.value)]);
  // `find … -delete` removes what it finds: a deny of `rm` covers it.
  if (program === 'find' && args.includes('-delete')) denyLayers.push(['rm', '-r', ...findStarts(args)]);
  const envWords = part.assignments.filter((a) => !isHarmlessEnv(a.name)).map((a) => `${a.name}=${a.value.value}`);
  const innermost = part.layers.at(-1)!.map((w) => w.value);
  const allowWords = part.opaque
    ? undefined
    : part.allowTransparent
      ? [[...envWords, ...innermost]]
      : [[...envWords, ...part.argv.map((w) => w.value)], innermost];
  // `/usr/bin/git` or `./cat` is some file of that name, not the program the read-only list means.
  const safeEnv = envWords.length === 0 && !part.layers.at(-1)![0]!.value.includes('/');
  const readOnly = safeEnv && part.allowTransparent && !part.opaque && part.inlineCode === undefined && (READ_ONLY_COMMANDS[program]?.(args) ?? false);
  const fileEdit = safeEnv && part.allowTransparent && !part.opaque && FILE_EDIT_COMMANDS.has(program);
  const command: CommandSubject = { part, denyLayers, allowWords, program, readOnly, fileEdit, critical: criticalRemoval(program, part.layers.at(-1)!, ctx) };
  if (program === 'find' && args.some((a) => FIND_ACTIONS.has(a))) command.exactOnly = true;
  return command;
}

function criticalRemoval(program: string, inner: ShellWord[], ctx: PathContext): string | undefined {
  if (program !== 'rm' && program !== 'rmdir') return undefined;
  for (const word of inner.slice(1)) {
    if (word.value.startsWith('-') && !word.dynamic) continue;
    const resolved = word.dynamic && !/^\$\{?(HOME|PWD)\}?(\/|$)/.test(word.value) ? undefined : absolutePath(word.glob ? globBase(word.value) : word.value, ctx);
    if (resolved === undefined) return `${program} ${word.value}: the target is only known when the command runs`;
    // `a*` removes some children of a folder; `*` or `/*` removes all of them, which is as bad as the folder.
    if (word.glob && /[A-Za-z0-9_-]/.test(word.value.slice(word.value.lastIndexOf('/') + 1))) continue;
    const rootish = resolved === '/' || resolved === ctx.home || resolved === ctx.cwd || ctx.cwd.startsWith(resolved.endsWith('/') ? resolved : `${resolved}/`);
    if (rootish) return `${program} would remove ${resolved}, which is the root, the home folder, the project or one of its parents`;
  }
  return undefined;
}

function gitCommandLineConfig(args: string[]): boolean {
  for (const a of args) {
    if (!a.startsWith('-')) return false;
    if (a === '-c' || a.startsWith('-c') || a.startsWith('--config-env')) return true;
  }
  return false;
}

/** The start folders of `find` (the words before its first expression). */
function findStarts(args: string[]): string[] {
  const starts: string[] = [];
  for (const a of args) {
    if (a.startsWith('-') || a === '(' || a === '!') break;
    starts.push(a);
  }
  return starts.length > 0 ? starts : ['.'];
}

function globBase(value: string): string {
  const cut = value.search(/[*?[]/);
  const dir = path.dirname(value.slice(0, cut + 1));
  return dir === '' ? '.' : dir;
}

function workingDirectories(parts: ShellPart[], ctx: PathContext, subject: CallSubject): string[] {
  const cwds = [ctx.cwd];
  for (const part of parts) {
    const inner = part.layers.at(-1)!;
    const program = programName(inner[0]);
    if (program !== 'cd' && program !== 'pushd') continue;
    const target = inner.slice(1).find((w) => !w.value.startsWith('-'));
    if (!target) cwds.push(ctx.home);
    else if (target.dynamic && !/^\$\{?(HOME|PWD)\b/.test(target.value)) subject.unknownCwd = true;
    else for (const base of [...cwds]) cwds.push(absolutePath(target.value, { ...ctx, cwd: base }));
  }
  return [...new Set(cwds)];
}

/** Values of an argument that could name a file: the word, or what follows `=` in `--out=x`, `of=x`. */
function namedValues(word: ShellWord): string[] {
  const v = word.value;
  if (v.length === 0) return [];
  if (v.startsWith('-')) {
    const eq = v.indexOf('=');
    return eq > 0 ? [v.slice(eq + 1)] : [];
  }
  const eq = v.indexOf('=');
  return eq > 0 && /^[A-Za-z_]+$/.test(v.slice(0, eq)) ? [v, v.slice(eq + 1)] : [v];
}

/** String literals and path-like tokens inside inline code (`open('.env')`). */
function codeLiterals(code: string): string[] {
  return code.split(/[\s'"`(),;:=<>|&{}[\]+]+/).filter((t) => t.length > 0 && /[./~]/.test(t));
}

function positionalArgs(args: string[]): string[] {
  const out: string[] = [];
  let ended = false;
  for (const a of args) {
    if (!ended && a === '--') ended = true;
    else if (ended || !a.startsWith('-') || a === '-') out.push(a);
  }
  return out;
}

function readTargets(program: string, args: string[]): string[] {
  if (!READERS.has(program)) return [];
  let targets = positionalArgs(args);
  const hasScriptFlag = args.some((a) => a === '-e' || a === '-f' || a.startsWith('--regexp') || a.startsWith('--file'));
  if (SCRIPT_FIRST.has(program) && !hasScriptFlag) targets = targets.slice(1);
  if (program === 'cp') targets = targets.slice(0, -1);
  if (targets.length === 0 && ['ls', 'find', 'tree', 'du', 'rg', 'grep'].includes(program)) return ['.'];
  return targets.filter((t) => t !== '-');
}

function writeTargets(program: string, args: string[]): string[] {
  const spec = WRITERS[program];
  const out: string[] = [];
  if (program === 'find' && args.includes('-delete')) out.push(...findStarts(args));
  if (program === 'sed' && args.some((a) => /^-[a-zA-Z]*i/.test(a) || a.startsWith('--in-place'))) {
    const hasScript = args.some((a) => a === '-e' || a === '-f');
    out.push(...positionalArgs(args).slice(hasScript ? 0 : 1));
  }
  if (!spec) return out;
  const pos = positionalArgs(args);
  if (spec.targets === 'all') out.push(...pos);
  else if (spec.targets === 'last' && pos.length > 1) out.push(pos.at(-1)!);
  else if (spec.targets === 'afterFirst') out.push(...pos.slice(1));
  for (const flag of spec.flags ?? []) {
    args.forEach((a, i) => {
      if (a === flag && args[i + 1] !== undefined) out.push(args[i + 1]!);
      else if (a.startsWith(`${flag}=`)) out.push(a.slice(flag.length + 1));
    });
  }
  return out;
}
