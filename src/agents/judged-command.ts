import { resolve } from 'node:path';

/**
 * The shell text Sage's gate judges for a command an agent asks to run: the program and its
 * arguments, the environment the agent adds, and the folder it runs in, written as a shell would
 * run the same thing (`cd DIR && NAME=value program args`). So the Bash rules, the risk of
 * variables such as `PATH` and the paths read from another folder all see what will run, and the
 * person sees it too.
 */

/** A word the shell reads as itself, or the word single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_/.,:=@%+-]+$/.test(word) ? word : quote(word);
}

const RESERVED = new Set(['!', 'case', 'coproc', 'do', 'done', 'elif', 'else', 'esac', 'fi', 'for', 'function', 'if', 'in', 'select', 'then', 'time', 'until', 'while', '{', '}', '[[', ']]']);

/**
 * The program word: quoted when the shell would read it otherwise than as a program name (`A=b` is
 * an assignment, `if` a keyword), so the gate judges the program that is spawned.
 */
function programWord(word: string): string {
  return /^[A-Za-z0-9_/.,:@%+-]+$/.test(word) && !RESERVED.has(word) ? word : quote(word);
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `program args…` as one shell command line. */
export function commandLine(argv: readonly string[]): string {
  const [program = '', ...args] = argv;
  return [programWord(program), ...args.map(shellWord)].join(' ');
}

/** A name the shell can assign (`NAME=value`); anything else cannot be shown or judged as it would be set. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `command` (a shell command line) as it runs in `cwd` with `env` added: `cd` when `cwd` is not the
 * session's folder, `NAME=value` for each variable in `env`.
 */
export function judgedCommand(command: string, where: { cwd: string; sessionCwd: string; env?: Readonly<Record<string, string>> }): string {
  const assignments = Object.entries(where.env ?? {}).map(([name, value]) => `${name}=${shellWord(value)} `).join('');
  const cd = resolve(where.cwd) === resolve(where.sessionCwd) ? '' : `cd ${shellWord(where.cwd)} && `;
  return `${cd}${assignments}${command}`;
}
