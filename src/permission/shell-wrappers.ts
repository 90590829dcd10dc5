import type { ShellWord } from './shell-words.js';

/** What stripping one layer off a command revealed. */
export type Unwrapped =
  /**
   * A wrapper (`nohup`, `sudo`, `env`, `npx`, `uv run`…) around an inner command. `from` is where
   * the wrapper's own options begin: the words between it and the inner command may have been
   * misread (an option value taken for the program or the other way round), so deny rules also try
   * the commands starting there.
   */
  | { kind: 'wrapper'; inner: ShellWord[]; harmless: boolean; from?: number; start?: number }
  /** `bash -c`, `eval`, `watch`: a shell script in a string; undefined when it is not literal. */
  | { kind: 'script'; script: string | undefined }
  /** `find -exec`: commands run per file. */
  | { kind: 'exec'; commands: ShellWord[][] }
  /** `python -c`, `node -e`: code we do not analyse. */
  | { kind: 'inline'; code: ShellWord };

/** `/bin/rm`, `./rm` and `rm` are the same program to deny and ask rules. */
export function programName(word: ShellWord | undefined): string {
  if (!word) return '';
  // zsh runs `=rm` as the `rm` it finds on PATH (its EQUALS expansion); elsewhere it is no program at all.
  const v = word.value.length > 1 && word.value.startsWith('=') ? word.value.slice(1) : word.value;
  const slash = v.lastIndexOf('/');
  return slash >= 0 ? v.slice(slash + 1) : v;
}

/** A word `env` reads as a variable assignment: anything with an `=` that is not an option. */
export const ENV_ASSIGNMENT = /^[^-=][^=]*=/s;

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish']);
/** Multi-call binaries: `busybox rm -rf x` is `rm -rf x`. */
const MULTI_CALL = new Set(['busybox', 'toybox']);
const INLINE_FLAGS: Record<string, string[]> = {
  python: ['-c'], python3: ['-c'], python2: ['-c'], node: ['-e', '-p', '--eval', '--print'], nodejs: ['-e', '-p'],
  perl: ['-e', '-E'], ruby: ['-e'], php: ['-r'], deno: ['eval'], bun: ['-e', '--eval'], osascript: ['-e'],
  pwsh: ['-c', '-Command', '-command'], powershell: ['-c', '-Command', '-command'], lua: ['-e'], Rscript: ['-e'],
};

// Options that take a value, per wrapper, so the value is not mistaken for the inner program.
const VALUE_OPTIONS: Record<string, Set<string>> = {
  sudo: new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-R', '-T', '-U', '-r', '-t']),
  doas: new Set(['-u', '-C']),
  timeout: new Set(['-s', '-k', '--signal', '--kill-after']),
  nice: new Set(['-n', '--adjustment']),
  ionice: new Set(['-c', '-n', '-p', '-P', '-u', '--class', '--classdata']),
  xargs: new Set(['-I', '-i', '-n', '-P', '-L', '-l', '-d', '-E', '-e', '-s', '-a', '--max-args', '--max-procs', '--delimiter', '--arg-file', '--replace']),
  env: new Set(['-u', '--unset', '-C', '--chdir', '-a', '--argv0', '-P']),
  stdbuf: new Set(['-i', '-o', '-e']),
  watch: new Set(['-n', '--interval', '-d']),
  exec: new Set(['-a']),
  chrt: new Set([]), setsid: new Set([]), nohup: new Set([]), time: new Set([]), command: new Set([]), builtin: new Set([]),
  taskset: new Set([]), flock: new Set(['-w', '-E']), caffeinate: new Set([]), unbuffer: new Set([]), noglob: new Set([]),
  strace: new Set(['-o', '-e', '-p', '-s', '-u', '-E']), ltrace: new Set(['-o', '-e', '-p', '-s', '-u']), valgrind: new Set([]),
  firejail: new Set([]), proxychains: new Set(['-f']), proxychains4: new Set(['-f']), torsocks: new Set([]), catchsegv: new Set([]),
  runuser: new Set(['-u', '-g', '-G']), 'systemd-run': new Set(['-p', '--property', '-u', '--unit', '-E', '--setenv', '--uid', '--gid']),
};
// Wrappers an allow rule may look through: they change nothing about what the inner command does.
const HARMLESS = new Set(['nohup', 'time', 'timeout', 'nice', 'command', 'builtin', 'stdbuf']);

/**
 * Runners that execute their arguments as a command (`npx eslint`, `uv run pytest`, `direnv exec
 * . make`). `subs`: the subcommand that makes the program a runner (`pnpm exec`, not `pnpm install`);
 * `values`: options that take a value; `scripts`: options whose value is a shell script; `commands`:
 * options after which the rest of the words is the command; `skip`: positionals before the command
 * (`direnv exec DIR cmd`); `dashDash`: the command follows `--` when there is one.
 */
interface Runner {
  subs?: ReadonlySet<string>;
  values: ReadonlySet<string>;
  scripts?: ReadonlySet<string>;
  commands?: ReadonlySet<string>;
  skip?: number;
  dashDash?: boolean;
  /** The command is only found through `scripts`/`commands` options (`nix-shell --run`). */
  onlyFlags?: boolean;
}
const set = (...words: string[]): ReadonlySet<string> => new Set(words);
const RUNNERS: Record<string, Runner> = {
  npx: { values: set('-p', '--package', '--cache', '--registry', '--userconfig', '-w', '--workspace'), scripts: set('-c', '--call') },
  pnpx: { values: set('-p', '--package') },
  bunx: { values: set('-p', '--package') },
  uvx: { values: set('--from', '--with', '--with-editable', '--with-requirements', '-w', '--python', '-p', '--index', '--index-url', '--extra-index-url', '--directory', '--project', '--env-file', '--constraints', '-c') },
  npm: { subs: set('exec', 'x'), values: set('-p', '--package', '-w', '--workspace', '--prefix', '-C'), scripts: set('-c', '--call'), dashDash: true },
  pnpm: { subs: set('exec', 'dlx', 'x'), values: set('-C', '--dir', '--filter', '-F', '--package', '--workspace-root'), scripts: set('-c'), dashDash: true },
  yarn: { subs: set('dlx', 'exec'), values: set('-p', '--package', '--cwd') },
  bun: { subs: set('x', 'exec'), values: set('-p', '--package', '--cwd') },
  uv: { subs: set('run', 'tool'), values: set('--with', '--with-editable', '--with-requirements', '-w', '--python', '-p', '--project', '--directory', '--env-file', '--extra', '--group', '--package', '--index', '--index-url', '--extra-index-url', '--from', '--only-group', '--no-group', '--constraints', '-c'), dashDash: true },
  poetry: { subs: set('run'), values: set('-C', '--directory', '-P', '--project') },
  pipx: { subs: set('run'), values: set('--spec', '--python', '--pip-args', '--index-url') },
  hatch: { subs: set('run'), values: set('-e', '--env') },
  pdm: { subs: set('run'), values: set('-p', '--project') },
  rye: { subs: set('run'), values: set('--pyproject') },
  conda: { subs: set('run'), values: set('-n', '--name', '-p', '--prefix', '--cwd') },
  'nix-shell': { values: set('-p', '-I', '--arg', '--argstr', '-A', '--attr'), scripts: set('--run', '--command'), onlyFlags: true },
  nix: { subs: set('develop', 'shell', 'run'), values: set('-f', '--file', '--profile', '--override-input', '-I', '--arg', '--argstr'), commands: set('-c', '--command'), onlyFlags: true },
  direnv: { subs: set('exec'), values: set(), skip: 1 },
  mise: { subs: set('exec', 'x'), values: set('-C', '--cd', '-E', '--env', '-j', '--jobs'), commands: set('-c', '--command'), dashDash: true },
  rtx: { subs: set('exec', 'x'), values: set('-C', '--cd'), dashDash: true },
  asdf: { subs: set('exec'), values: set() },
  devbox: { subs: set('run'), values: set('-c', '--config', '-e', '--env', '--env-file') },
  dotenv: { values: set('-e', '-c', '-v'), dashDash: true },
  'op': { subs: set('run'), values: set('--env-file'), dashDash: true },
  chroot: { values: set('--userspec', '--groups', '--skip-chdir'), skip: 1 },
  parallel: { values: set('-j', '--jobs', '-S', '--sshlogin', '-a', '--arg-file', '--delay', '--timeout', '--joblog', '--results', '-N', '-n', '-L', '-I', '--colsep') },
  script: { values: set('-E', '--echo', '-I', '--log-in', '-O', '--log-out', '-T', '--log-timing', '-t', '--timing'), scripts: set('-c', '--command'), onlyFlags: true },
  su: { values: set('-s', '--shell', '-g', '--group', '-G', '--supp-group', '-w'), scripts: set('-c', '--command'), onlyFlags: true },
  'xvfb-run': { values: set('-n', '--server-num', '-s', '--server-args', '-f', '--auth-file', '-e', '--error-file', '-p', '--xauth-protocol') },
};

/** The command a runner executes, or undefined when the program is not used as a runner. */
function unwrapRunner(name: string, runner: Runner, argv: ShellWord[]): Unwrapped | undefined {
  let i = 1;
  const skipOptions = () => {
    while (i < argv.length) {
      const w = argv[i]!.value;
      if (!w.startsWith('-') || w === '-' || w === '--') return;
      if (runner.scripts?.has(w)) return;
      if (runner.commands?.has(w)) return;
      i += runner.values.has(w) ? 2 : 1;
    }
  };
  if (runner.subs) {
    skipOptions();
    if (!runner.subs.has(argv[i]?.value ?? '')) return undefined;
    // `uv tool run x` is `uv run x`'s twin.
    if (name === 'uv' && argv[i]!.value === 'tool') {
      if (argv[i + 1]?.value !== 'run') return undefined;
      i += 1;
    }
    i += 1;
  }
  const from = i;
  if (runner.onlyFlags || runner.scripts || runner.commands) {
    for (let j = from; j < argv.length; j++) {
      const w = argv[j]!.value;
      if (w === '--') break;
      if (runner.scripts?.has(w)) {
        const script = argv[j + 1];
        return { kind: 'script', script: script && !script.dynamic ? script.value : undefined };
      }
      if (runner.commands?.has(w)) {
        const inner = argv.slice(j + 1);
        return inner.length > 0 ? { kind: 'wrapper', inner, harmless: false, from: j + 1, start: j + 1 } : undefined;
      }
    }
    if (runner.onlyFlags) return undefined;
  }
  const dashDash = runner.dashDash ? argv.findIndex((w, j) => j >= from && w.value === '--') : -1;
  if (dashDash >= 0) i = dashDash + 1;
  else {
    skipOptions();
    if (argv[i]?.value === '--') i += 1;
    i += runner.skip ?? 0;
  }
  const inner = argv.slice(i);
  return inner.length > 0 ? { kind: 'wrapper', inner, harmless: false, from, start: i } : undefined;
}

/** Strips one wrapper layer, or says what kind of payload the command carries. */
export function unwrapOnce(argv: ShellWord[]): Unwrapped | undefined {
  const name = programName(argv[0]);
  if (SHELLS.has(name)) return shellScript(argv);
  if (MULTI_CALL.has(name)) return argv.length > 1 ? { kind: 'wrapper', inner: argv.slice(1), harmless: false, from: 1, start: 1 } : undefined;
  const runner = RUNNERS[name];
  if (runner) return unwrapRunner(name, runner, argv);
  if (name === 'eval') return joinedScript(argv.slice(1));
  if (name === 'find') return findExec(argv);
  const inline = INLINE_FLAGS[name];
  if (inline) {
    const i = argv.findIndex((w, idx) => idx > 0 && inline.includes(w.value));
    const code = i > 0 ? argv[i + 1] : undefined;
    return code ? { kind: 'inline', code } : undefined;
  }
  const valueOptions = VALUE_OPTIONS[name];
  if (!valueOptions) return undefined;
  // `command -v x` / `command -V x` only describe x; they run nothing.
  if (name === 'command' && argv.slice(1).some((w) => /^-[a-zA-Z]*[vV]/.test(w.value))) return undefined;
  let i = 1;
  while (i < argv.length) {
    const w = argv[i]!.value;
    if (w === '--') { i += 1; break; }
    // env takes every word with an `=` as an assignment, names no shell could spell included (`BASH_FUNC_ls%%=…`).
    if (name === 'env' && ENV_ASSIGNMENT.test(w)) { i += 1; continue; }
    if (name === 'env' && (w === '-S' || w === '--split-string')) return joinedScript(argv.slice(i + 1));
    // `env -S'rm -rf x'` / `--split-string=…`: the script is in the same word.
    if (name === 'env' && /^(-S|--split-string=)./s.test(w)) return joinedScript([{ ...argv[i]!, value: w.slice(w.startsWith('-S') ? 2 : 15) }, ...argv.slice(i + 1)]);
    if (!w.startsWith('-') || w === '-') break;
    i += valueOptions.has(w) ? 2 : 1;
  }
  if (name === 'timeout') i += 1; // the duration
  if (name === 'nice' && /^-\d+$/.test(argv[1]?.value ?? '')) i = Math.max(i, 2);
  if (name === 'watch') return joinedScript(argv.slice(i));
  const inner = argv.slice(i);
  if (inner.length === 0) return undefined;
  const harmless = HARMLESS.has(name) && argv[0]!.value === name;
  return { kind: 'wrapper', inner, harmless: name === 'env' ? false : harmless, from: 1, start: i };
}

/** The shells whose exact `-c` wrapper is judged by its script, where the system keeps them. */
const EXACT_SHELLS = new Set(['bash', 'sh', 'zsh']);
const EXACT_SHELL_DIRS = ['', '/bin/', '/usr/bin/'];

/**
 * The script of an exact shell wrapper, `bash -c 'script'` or `/bin/bash -lc 'script'` (how Codex
 * runs every command), or undefined for any other form. Exact means nothing but the script changes
 * what runs: a system shell, the one option `-c` or `-lc`, one literal script and no word after it
 * (those become `$0`, `$1`…). Other options (`--rcfile`, `-i`, `-x`), a shell named by another path
 * (`./bash`) or a script known only when it runs keep the wrapper in the way of allow rules.
 */
export function exactShellScript(argv: readonly ShellWord[]): string | undefined {
  if (argv.length !== 3 || argv.some((w) => w.dynamic || w.glob || w.brace)) return undefined;
  const [shell, option, script] = argv as [ShellWord, ShellWord, ShellWord];
  const name = programName(shell);
  if (!EXACT_SHELLS.has(name) || !EXACT_SHELL_DIRS.some((dir) => shell.value === `${dir}${name}`)) return undefined;
  if (option.value !== '-c' && option.value !== '-lc') return undefined;
  return script.value;
}

function shellScript(argv: ShellWord[]): Unwrapped | undefined {
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!.value;
    // `-c`, and clusters such as `-lc` or `-ec`, take the script as the next word.
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(w)) {
      const script = argv[i + 1];
      return { kind: 'script', script: script && !script.dynamic ? script.value : undefined };
    }
    if (!w.startsWith('-')) return undefined; // `bash script.sh`: a file, judged as a command
  }
  return undefined;
}

function joinedScript(words: ShellWord[]): Unwrapped | undefined {
  if (words.length === 0) return undefined;
  return { kind: 'script', script: words.some((w) => w.dynamic) ? undefined : words.map((w) => w.value).join(' ') };
}

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

function findExec(argv: ShellWord[]): Unwrapped | undefined {
  const commands: ShellWord[][] = [];
  for (let i = 1; i < argv.length; i++) {
    if (!FIND_EXEC.has(argv[i]!.value)) continue;
    const cmd: ShellWord[] = [];
    let j = i + 1;
    for (; j < argv.length && argv[j]!.value !== ';' && argv[j]!.value !== '+'; j++) cmd.push(argv[j]!);
    if (cmd.length > 0) commands.push(cmd);
    i = j;
  }
  return commands.length > 0 ? { kind: 'exec', commands } : undefined;
}
