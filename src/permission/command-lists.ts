/**
 * What Sage knows about common programs: which only read, which paths they read or write, and
 * which flags turn a reader into a writer. Unknown programs are never treated as read-only.
 */

type ArgsCheck = (args: readonly string[]) => boolean;
const always: ArgsCheck = () => true;
const withoutFlags = (...bad: string[]): ArgsCheck => (args) => !args.some((a) => bad.some((b) => a === b || a.startsWith(`${b}=`) || (b.length === 2 && !b.startsWith('--') && a.startsWith(b) && !a.startsWith('--'))));
const positionals = (args: readonly string[]) => args.filter((a) => !a.startsWith('-') || a === '-');

const GIT_READ_ONLY = new Set(['status', 'diff', 'log', 'show', 'blame', 'rev-parse', 'ls-files', 'ls-tree', 'describe', 'shortlog', 'grep', 'cat-file', 'merge-base', 'show-ref', 'whatchanged']);

/**
 * The default read-only commands (configurable through the engine's `readOnlyCommands`). Readers of
 * the environment (`printenv`, `env`, `ps e`) are left out: the environment holds secrets; so are
 * pagers (`less`, `more` run commands with `!`) and `uniq`/`xxd` (a second argument is an output file);
 * `printf -v NAME` assigns a variable (`printf -v PATH …` changes what later commands run).
 */
export const READ_ONLY_COMMANDS: Record<string, ArgsCheck> = {
  ls: always, cat: always, head: always, tail: withoutFlags('-f', '--follow', '-F'),
  wc: always, pwd: always, echo: always, printf: withoutFlags('-v'), which: always, whoami: always, date: withoutFlags('-s', '--set'),
  file: withoutFlags('-m', '--magic-file', '-C', '--compile'), stat: always, du: always, df: always, tree: withoutFlags('-o'), sort: withoutFlags('-o', '--output', '--compress-program'),
  cut: always, tr: always, diff: withoutFlags('--output'), cmp: always,
  basename: always, dirname: always, realpath: always, readlink: always, true: always, false: always, test: always,
  '[': always, grep: always, egrep: always, fgrep: always, rg: withoutFlags('--pre'), nl: always, tac: always,
  od: always, hexdump: always, strings: always, md5sum: always, sha1sum: always, sha256sum: always, sha512sum: always,
  base64: withoutFlags('-o', '--output'),
  id: always, uname: always, type: always, jq: always, seq: always, column: always, comm: always, paste: always,
  fold: always, cd: always, pushd: always, popd: always, nproc: always,
  find: withoutFlags('-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls'),
  git: (args) => {
    // Options that write a file or run a program (`git grep -O<cmd>` opens the matches in it).
    if (args.some((a) => a.startsWith('--output') || a === '--ext-diff' || a.startsWith('--exec') || a === '--textconv' || a.startsWith('-O') || a.startsWith('--open-files-in-pager'))) return false;
    const at = args.findIndex((a) => !a.startsWith('-'));
    // Any global option before the subcommand (`-c k=v`, `-C dir`, `--git-dir=`) may run another repository's config or hooks.
    return at === 0 && GIT_READ_ONLY.has(args[0]!) || (at > 0 && args.slice(0, at).every((a) => a === '--no-pager' || a === '-P') && GIT_READ_ONLY.has(args[at]!));
  },
  // `sed -n '5p'` only prints; any other script could write (`w`) or execute (`e`).
  sed: (args) => args.includes('-n') && !args.some((a) => a.startsWith('-i') || a === '--in-place') && positionals(args).slice(0, 1).every((s) => /^\s*(\d+|\$)?\s*(,\s*(\d+|\$))?\s*p\s*$/.test(s)),
};

/** Programs whose path arguments are reads (Read rules apply). */
export const READERS = new Set([
  'cat', 'head', 'tail', 'less', 'more', 'grep', 'egrep', 'fgrep', 'rg', 'sort', 'uniq', 'diff', 'cmp', 'comm', 'base64',
  'xxd', 'od', 'hexdump', 'strings', 'wc', 'nl', 'cut', 'tac', 'md5sum', 'sha1sum', 'sha256sum', 'sha512sum', 'file',
  'stat', 'jq', 'sed', 'awk', 'source', '.', 'ls', 'find', 'tree', 'du', 'cp', 'tar', 'zip', 'scp', 'rsync', 'strings',
  'vim', 'vi', 'nano', 'emacs', 'view', 'bat', 'open', 'iconv', 'gzip', 'zcat', 'bzcat', 'xzcat',
]);

/** Readers that list a folder they are given: a Read rule denying everything inside it denies the listing. */
export const LISTERS = new Set(['ls', 'tree', 'du', 'find', 'dir', 'vdir', 'exa', 'eza', 'lsd']);

/** Readers that walk whole folders. */
export const RECURSIVE_READERS: Record<string, ArgsCheck> = {
  rg: always, find: always, du: always, tree: always, tar: always, zip: always,
  grep: (args) => args.some((a) => /^-[a-zA-Z]*[rR]/.test(a) || a === '--recursive'),
  ls: (args) => args.some((a) => /^-[a-zA-Z]*R/.test(a) || a === '--recursive'),
  cp: (args) => args.some((a) => /^-[a-zA-Z]*[rRa]/.test(a) || a === '--recursive' || a === '--archive'),
};

/** Which words of a writer's arguments are written: 'all' positionals, 'last', or a flag's value. */
export interface WriterSpec {
  targets: 'all' | 'last' | 'afterFirst' | 'none';
  flags?: string[];
}

export const WRITERS: Record<string, WriterSpec> = {
  tee: { targets: 'all' }, touch: { targets: 'all' }, mkdir: { targets: 'all' }, rm: { targets: 'all' }, rmdir: { targets: 'all' },
  unlink: { targets: 'all' }, truncate: { targets: 'all', flags: ['-r'] }, shred: { targets: 'all' }, mv: { targets: 'all' },
  cp: { targets: 'last' }, ln: { targets: 'last' }, install: { targets: 'last' }, chmod: { targets: 'afterFirst' }, chown: { targets: 'afterFirst' },
  chgrp: { targets: 'afterFirst' }, sort: { targets: 'none', flags: ['-o', '--output'] }, tree: { targets: 'none', flags: ['-o'] },
  curl: { targets: 'none', flags: ['-o', '--output'] }, wget: { targets: 'none', flags: ['-O', '--output-document'] },
  base64: { targets: 'none', flags: ['-o', '--output'] }, diff: { targets: 'none', flags: ['--output'] },
  git: { targets: 'none', flags: ['--output'] }, dd: { targets: 'none', flags: ['of'] },
  uniq: { targets: 'last' }, xxd: { targets: 'last' },
};

/** Programs that only edit files (acceptEdits lets them run inside the project). */
export const FILE_EDIT_COMMANDS = new Set(['mkdir', 'touch', 'cp', 'mv']);

/** Environment variables an allow rule may look through; anything else could change what runs. */
export const HARMLESS_ENV = new Set(['NODE_ENV', 'CI', 'LANG', 'LANGUAGE', 'TZ', 'NO_COLOR', 'FORCE_COLOR', 'TERM', 'COLUMNS', 'LINES', 'DEBUG', 'RUST_BACKTRACE', 'PYTHONUNBUFFERED', 'PYTHONDONTWRITEBYTECODE']);
export function isHarmlessEnv(name: string): boolean {
  return HARMLESS_ENV.has(name) || /^LC_[A-Z]+$/.test(name);
}

/** Shell start-up files: writing them runs code in every later shell. */
export const SHELL_STARTUP_FILES = ['.bashrc', '.bash_profile', '.bash_login', '.profile', '.zshrc', '.zprofile', '.zshenv', '.zlogin', '.zlogout', '.kshrc', '.cshrc', '.tcshrc', '.inputrc', '.bash_logout', '.config/fish/config.fish'];

/** Programs whose risk is known to be moderate; anything not listed is UNKNOWN (counted as HIGH). */
export const MEDIUM_RISK_COMMANDS = new Set([
  'npm', 'npx', 'pnpm', 'yarn', 'bun', 'node', 'tsc', 'tsx', 'vitest', 'jest', 'eslint', 'prettier', 'make', 'cargo', 'go',
  'python', 'python3', 'pip', 'pytest', 'git', 'mkdir', 'touch', 'cp', 'mv', 'tee', 'ln', 'sed', 'awk', 'docker', 'deno', 'rustc', 'gcc', 'cc', 'javac', 'mvn', 'gradle',
]);
