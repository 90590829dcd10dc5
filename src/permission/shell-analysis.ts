import type { Node } from 'web-tree-sitter';
import { parseShellTree } from './shell-parser.js';
import { joinLineContinuations, wordOf, type ShellWord } from './shell-words.js';
import { exactShellScript, programName, unwrapOnce } from './shell-wrappers.js';
import { changesWhatRuns } from './environment-variables.js';

/** One simple command of a (possibly compound) shell command line. */
export interface ShellPart {
  /** The words as they will run, after quote removal, with `VAR=value` prefixes removed. */
  argv: ShellWord[];
  assignments: { name: string; value: ShellWord }[];
  /** argv and then each inner command found by stripping wrappers, outermost first. */
  layers: ShellWord[][];
  /** Every wrapper stripped is harmless (`nohup`, `timeout`…), so allow rules may match the innermost layer. */
  allowTransparent: boolean;
  /** Why this part cannot be judged from its text (non-literal `sh -c`, a program name that is an expansion). */
  opaque?: string;
  /** Literal inline code (`python -c '…'`): scanned for denied paths, never treated as read-only. */
  inlineCode?: string;
  /**
   * Other readings of the words, for deny and ask rules only: a wrapper's words read with a
   * different guess about which are option values, and git without its global options.
   */
  denyOnly: ShellWord[][];
  /** An exact shell wrapper (`/bin/bash -lc 'script'`, no variables set for it); its script's commands are parts of their own. */
  shellWrapper?: boolean;
}

export interface ShellRedirect {
  op: string;
  target: ShellWord;
}

export interface ShellAnalysis {
  parts: ShellPart[];
  redirects: ShellRedirect[];
  /** The parser reported a syntax error: what it recovered is checked against deny rules, but never allowed. */
  parseError: boolean;
  /** Zero-width or bidi control characters, which can make a command look unlike what runs. */
  hiddenChars: boolean;
  tooLong: boolean;
  tooManyParts: boolean;
  /** Crude segments of the raw text, for deny checks that must not fail open on unparseable text. */
  fallbackSegments: string[][];
  /** Shell forms that prefix allow rules never approve: subshells, brace groups, `&` (Claude Code asks too). */
  forms: string[];
  /** Has a here-document (acceptEdits does not cover writing one into a file, as in Claude Code). */
  heredoc: boolean;
  /** The whole line is one exact shell wrapper (`/bin/bash -lc 'script'`): its shell and option, and the script. */
  wrapped?: { shell: string; script: string };
}

export const MAX_COMMAND_LENGTH = 10_000;
export const MAX_PARTS = 50;
const MAX_DEPTH = 5;
const HIDDEN_CHARS = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD\u180E]/;
const SCRIPT_NODES_WITH_COMMANDS = new Set(['command', 'declaration_command', 'unset_command']);

/** Parses a command line into parts, recursing into substitutions, subshells, wrappers and `sh -c` strings. */
export function analyzeShell(command: string): ShellAnalysis {
  const out: ShellAnalysis = {
    parts: [], redirects: [], parseError: false, hiddenChars: HIDDEN_CHARS.test(command),
    tooLong: command.length > MAX_COMMAND_LENGTH, tooManyParts: false, fallbackSegments: fallbackSegments(command), forms: [], heredoc: false,
  };
  collect(command, 0, out);
  out.tooManyParts = out.parts.length > MAX_PARTS;
  return out;
}

function collect(source: string, depth: number, out: ShellAnalysis): void {
  if (depth > MAX_DEPTH) {
    out.parseError = true;
    return;
  }
  const tree = parseShellTree(joinLineContinuations(source));
  try {
    if (tree.rootNode.hasError) out.parseError = true;
    walk(tree.rootNode, depth, out);
  } finally {
    tree.delete();
  }
}

function walk(node: Node, depth: number, out: ShellAnalysis): void {
  if (node.type === 'file_redirect') {
    const op = node.children.find((c) => c && !c.isNamed)?.text ?? '>';
    const target = node.childForFieldName('destination') ?? node.namedChildren.filter((c) => c && c.type !== 'file_descriptor').at(-1);
    if (target) out.redirects.push({ op, target: wordOf(target) });
  } else if (SCRIPT_NODES_WITH_COMMANDS.has(node.type)) {
    addCommand(node, depth, out);
  } else if (node.type === 'variable_assignment' && node.parent?.type !== 'command' && node.parent?.type !== 'declaration_command') {
    // A bare `PATH=/tmp` changes what later commands run; it is a part of its own that needs approval.
    const value = node.childForFieldName('value');
    out.parts.push(part([{ value: node.text, dynamic: true, glob: false }], [{ name: node.childForFieldName('name')?.text ?? '', value: value ? wordOf(value) : { value: '', dynamic: false, glob: false } }]));
  } else if (node.type === 'for_statement' && changesWhatRuns(node.childForFieldName('variable')?.text ?? '')) {
    // `for PATH in /tmp/x; do ls; done` (and `select`) assigns the loop variable before each pass.
    const name = node.childForFieldName('variable')!.text;
    out.parts.push(part([{ value: `${name}=…`, dynamic: true, glob: false }], [{ name, value: { value: '', dynamic: true, glob: false } }]));
  } else if (node.type === 'redirected_statement' && node.childForFieldName('body')?.type === 'command' && readsScriptFromStdin(node.childForFieldName('body')!)) {
    // `bash <<'EOF' … EOF`: the here-document is the script the shell runs; its commands are parts.
    for (const child of node.children) {
      const body = child?.type === 'heredoc_redirect' ? child.children.find((c) => c?.type === 'heredoc_body') : undefined;
      if (body) collect(body.text, depth + 1, out);
    }
  } else if (node.type === 'pipeline') {
    if (node.namedChildren.some((c, i) => i > 0 && c?.type === 'command' && readsScriptFromStdin(c))) addForm(out, 'it pipes text into a shell, which runs it as a script');
  }
  if (node.type === 'heredoc_redirect') {
    out.heredoc = true;
    // `<<EOF` expands `$…` and `$( … )` in its text when it runs; `<<'EOF'` / `<<"EOF"` / `<<\EOF` do not.
    const start = node.children.find((c) => c?.type === 'heredoc_start')?.text ?? '';
    if (!/['"\\]/.test(start)) addForm(out, 'it has an unquoted here-document, whose text is expanded when the command runs');
  } else if (node.type === '&' && !node.isNamed) addForm(out, 'it runs a command in the background (&)');
  else if (node.type === 'subshell') addForm(out, 'it runs commands in a subshell ( … )');
  else if (node.type === 'compound_statement') addForm(out, 'it runs a brace group { …; }');
  if (node.type === 'ERROR' || node.isMissing) out.parseError = true;
  for (const child of node.children) if (child) walk(child, depth, out);
}

const STDIN_SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish']);

/** `bash`, `sh -s`, `bash -x`: a shell with no `-c` script and no script file reads its script from stdin. */
function readsScriptFromStdin(command: Node): boolean {
  const name = command.childForFieldName('name')?.text ?? '';
  if (!STDIN_SHELLS.has(name.slice(name.lastIndexOf('/') + 1))) return false;
  for (const arg of command.childrenForFieldName('argument')) {
    const text = arg?.text ?? '';
    if (text === '-s') return true;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(text) || !text.startsWith('-')) return false;
  }
  return true;
}

function addCommand(node: Node, depth: number, out: ShellAnalysis): void {
  // `sh <<< 'rm -rf x'`: a here-string fed to a shell is its script.
  const herestring = node.type === 'command' && readsScriptFromStdin(node) ? node.namedChildren.find((c) => c?.type === 'herestring_redirect')?.namedChildren[0] : undefined;
  if (herestring) {
    const script = wordOf(herestring);
    if (script.dynamic) addForm(out, 'it feeds a shell a script that is only known when it runs');
    else collect(script.value, depth + 1, out);
  }
  const assignments: ShellPart['assignments'] = [];
  const argv: ShellWord[] = [];
  if (node.type !== 'command') argv.push({ value: node.children[0]?.text ?? node.type, dynamic: false, glob: false });
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'variable_assignment' && node.type === 'command') {
      const name = child.childForFieldName('name')?.text ?? '';
      const valueNode = child.childForFieldName('value');
      assignments.push({ name, value: valueNode ? wordOf(valueNode) : { value: '', dynamic: false, glob: false } });
    } else if (child.type === 'command_name') {
      const inner = child.namedChildren[0];
      if (inner) argv.push(wordOf(inner));
    } else if (child.type === 'file_redirect' || child.type === 'herestring_redirect' || child.type === 'heredoc_redirect') {
      continue;
    } else if (child.type === 'variable_assignment') {
      argv.push({ value: child.text, dynamic: true, glob: false });
    } else {
      argv.push(wordOf(child));
    }
  }
  if (argv.length === 0) {
    if (assignments.length > 0) out.parts.push(part([{ value: assignments.map((a) => `${a.name}=${a.value.value}`).join(' '), dynamic: true, glob: false }], assignments));
    return;
  }
  const expanded = expand(argv, assignments, depth, out);
  out.parts.push(expanded);
  const root = node.parent;
  if (expanded.shellWrapper && depth === 0 && root?.type === 'program' && root.namedChildCount === 1) {
    out.wrapped = { shell: `${argv[0]!.value} ${argv[1]!.value}`, script: argv[2]!.value };
  }
}

function addForm(out: ShellAnalysis, form: string): void {
  if (!out.forms.includes(form)) out.forms.push(form);
}

function part(argv: ShellWord[], assignments: ShellPart['assignments']): ShellPart {
  return { argv, assignments, layers: [argv], allowTransparent: true, denyOnly: [] };
}

// Git's options before the subcommand (`git -C dir push`): a deny of `git push *` must still see `git push`.
const GIT_GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env', '--super-prefix', '--list-cmds', '--attr-source']);

function withoutGitGlobals(layer: ShellWord[]): ShellWord[] | undefined {
  if (programName(layer[0]).toLowerCase() !== 'git') return undefined;
  let i = 1;
  while (i < layer.length && layer[i]!.value.startsWith('-') && layer[i]!.value !== '--') i += GIT_GLOBAL_WITH_VALUE.has(layer[i]!.value) ? 2 : 1;
  return i > 1 ? [layer[0]!, ...layer.slice(i)] : undefined;
}

/** How many other readings of a wrapper's words deny rules try (each a suffix of the words). */
const MAX_ALTERNATES = 4;

/**
 * Strips wrappers layer by layer; scripts and `find -exec` commands become parts of their own.
 * `alternates`: whether to add other readings of wrappers' words for deny rules (not for those
 * readings themselves, so the work stays linear).
 */
function expand(argv: ShellWord[], assignments: ShellPart['assignments'], depth: number, out: ShellAnalysis, alternates = true): ShellPart {
  const result = part(argv, assignments);
  if (argv[0]!.dynamic || argv[0]!.glob) result.opaque = `the program name ${argv[0]!.value} is only known when the command runs`;
  let current = argv;
  for (let guard = 0; guard < 16; guard++) {
    const step = unwrapOnce(current);
    if (!step) break;
    if (step.kind === 'wrapper') {
      if (alternates && step.from !== undefined && step.start !== undefined) {
        let added = 0;
        for (let j = step.from; j < Math.min(current.length, step.start + 3) && added < MAX_ALTERNATES; j++) {
          if (j === step.start || current[j]!.value.startsWith('-')) continue;
          const other = expand(current.slice(j), [], depth, out, false);
          result.denyOnly.push(...other.layers, ...other.denyOnly);
          added += 1;
        }
      }
      current = step.inner;
      result.layers.push(current);
      if (!step.harmless) result.allowTransparent = false;
      if (current[0]?.dynamic || current[0]?.glob) result.opaque = `the program name ${current[0].value} is only known when the command runs`;
      continue;
    }
    if (step.kind === 'script') {
      if (step.script === undefined) result.opaque = `${programName(current[0])} runs a script that is only known when the command runs`;
      else collect(step.script, depth + 1, out);
      result.allowTransparent = false;
      if (current === argv && assignments.length === 0 && step.script !== undefined && exactShellScript(argv) === step.script) result.shellWrapper = true;
    } else if (step.kind === 'exec') {
      for (const cmd of step.commands) out.parts.push(expand(cmd, [], depth, out));
      result.allowTransparent = false;
    } else {
      if (step.code.dynamic) result.opaque = `${programName(current[0])} runs code that is only known when the command runs`;
      result.inlineCode = step.code.value;
    }
    break;
  }
  for (const layer of result.layers) {
    const git = withoutGitGlobals(layer);
    if (git) result.denyOnly.push(git);
  }
  return result;
}

/**
 * A crude split on operators and blanks with quotes stripped. Only deny checks use it, so that text
 * the parser cannot make sense of still cannot hide a denied command.
 */
function fallbackSegments(command: string): string[][] {
  return command
    .replace(/\\\r?\n/g, '')
    .split(/\$\(|[;&|()`\n{}]+/)
    .map((segment) =>
      segment
        .split(/[\s<>]+/)
        .map((w) => w.replace(/['"\\]/g, ''))
        .filter((w) => w.length > 0 && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)),
    )
    .filter((words) => words.length > 0);
}

export { programName };
