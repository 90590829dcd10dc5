import { isHarmlessEnv } from './command-lists.js';
import type { ShellPart } from './shell-analysis.js';
import { ENV_ASSIGNMENT, programName } from './shell-wrappers.js';

/**
 * Variables that decide which program runs or what it loads: where programs are looked up, what the
 * dynamic loader preloads, the config, hooks and helpers git, shells, interpreters and package
 * managers read. A command that sets one is not the command its text shows (`PATH=/tmp/x ls` runs
 * whatever `/tmp/x/ls` is), so no allow rule may cover it. Names are compared in upper case: zsh
 * ties `path` to `PATH`, and Windows ignores case.
 */
const EXACT = new Set([
  'PATH', 'IFS', 'ENV', 'BASH_ENV', 'CDPATH', 'PROMPT_COMMAND', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'GLOBIGNORE', 'INPUTRC',
  'HOME', 'ZDOTDIR', 'SHELL', 'EDITOR', 'VISUAL', 'PAGER', 'BROWSER', 'LESSOPEN', 'LESSCLOSE', 'MANPAGER', 'TERMINFO', 'TERMINFO_DIRS',
  'CLASSPATH', 'GLIBC_TUNABLES', 'LOCPATH', 'NLSPATH', 'GCONV_PATH', 'HOSTALIASES', 'GNUPGHOME', 'KUBECONFIG',
  'CC', 'CXX', 'CPP', 'LD', 'AR', 'AS', 'MAKE', 'MAKEFLAGS', 'MFLAGS', 'RUSTC', 'RUSTDOC', 'PHPRC', 'PHP_INI_SCAN_DIR',
  'MAKEFILES', 'EXECIGNORE', 'FCEDIT', 'PS0', 'PS1', 'PS2', 'PS3', 'LESS', 'VIMINIT', 'EXINIT', 'MYVIMRC', 'VIMRUNTIME', 'MANOPT', 'IPYTHONDIR', 'PERL5OPT', 'RUBYOPT',
]);
const PREFIXES = [
  'LD_', 'DYLD_', 'GIT_', 'PYTHON', 'PERL', 'RUBY', 'GEM_', 'BUNDLE_', 'NODE_', 'NPM_CONFIG_', 'YARN_', 'PNPM_', 'BUN_', 'DENO_',
  'PIP_', 'UV_', 'CARGO_', 'RUSTUP_', 'LUA_', 'TCL', 'JAVA_', '_JAVA_', 'JDK_JAVA_', 'MAVEN_', 'GRADLE_', 'DOTNET_', 'CORECLR_',
  'COMPLUS_', 'ELECTRON_', 'BASH_FUNC_', 'XDG_', 'SSH_', 'SUDO_', 'OPENSSL_', 'LESSKEY', 'CCACHE_', 'R_PROFILE', 'R_ENVIRON', 'R_LIBS',
];
/** Whatever the tool: search paths, preloads, option and flag strings, homes, config and rc files, pagers, editors, remote shells, modules and plugins, helper commands and prefixes. */
const SUFFIX = /(PATH|_PRELOAD|_OPTIONS|_OPTS|_OPT|FLAGS|LIB|_HOME|CONFIG|CONF|RC|PAGER|EDITOR|ASKPASS|_SHELL|_COMMAND|_CMD|_WRAPPER|_INIT|RSH|_SSH|_MODULES|_PLUGINS|_PREFIX)$|_CONFIG_|^GO[A-Z]+$/;

export function changesWhatRuns(name: string): boolean {
  if (isHarmlessEnv(name)) return false;
  const upper = name.toUpperCase();
  return EXACT.has(upper) || PREFIXES.some((p) => upper.startsWith(p)) || SUFFIX.test(upper);
}

/** What one shell command does to the environment of what it runs. */
export interface EnvironmentChange {
  /** Variables it sets, as spelled. */
  names: string[];
  /** `env -C DIR` / `--chdir`: the command runs in another folder. */
  chdir: boolean;
}

const DECLARATIONS = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);
const NAME = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/;

/**
 * The variables one command sets for itself or for the commands after it: `NAME=value cmd`, `env
 * NAME=value cmd` (in any wrapper layer), `time NAME=value cmd`, `export`/`declare`/`typeset`/`local`/`readonly NAME=…`,
 * `printf -v NAME`, `read NAME`, `mapfile NAME`.
 */
export function environmentChange(part: ShellPart): EnvironmentChange {
  const names = part.assignments.map((a) => NAME.exec(`${a.name}=`)?.[1] ?? a.name);
  let chdir = false;
  for (const layer of part.layers) {
    const program = programName(layer[0]);
    const words = layer.slice(1).map((w) => w.value);
    if (program === 'env') chdir = envWords(words, names) || chdir;
    // `time` is a shell keyword: `time PATH=/x ls` sets PATH for ls.
    else if (program === 'time' && layer[0]!.value === 'time') for (const w of words.filter((x) => !x.startsWith('-'))) {
      if (!NAME.test(w)) break;
      pushName(names, w);
    }
    else if (DECLARATIONS.has(program)) for (const w of words) pushName(names, w);
    else if (program === 'printf') printfTarget(words, names);
    else if (program === 'read') readTargets(words, names);
    else if (program === 'mapfile' || program === 'readarray') mapfileTarget(words, names);
    // `let PATH=1` assigns; `getopts a PATH -a` stores the option letter in PATH (then `ls` runs ./a/ls).
    else if (program === 'let') for (const w of words) names.push(...[...w.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)/g)].map((m) => m[1]!));
    else if (program === 'getopts' && words[1] !== undefined) names.push(words[1]);
  }
  return { names: [...new Set(names)], chdir };
}

function pushName(names: string[], word: string): void {
  const match = NAME.exec(word);
  if (match) names.push(match[1]!);
}

/** `env [-i] [-u NAME] [-C DIR] NAME=value… cmd`: the assignments, and whether it changes folder. */
function envWords(words: string[], names: string[]): boolean {
  let chdir = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-C' || w === '--chdir' || w.startsWith('--chdir=') || /^-[a-zA-Z0-9]*C/.test(w)) {
      chdir = true;
      if (w === '-C' || w === '--chdir') i += 1;
    } else if (w === '-u' || w === '--unset' || w === '-a' || w === '--argv0') i += 1;
    // BSD env's `-P DIR` looks the program up in DIR: a PATH of its own.
    else if (w === '-P') { names.push('PATH'); i += 1; }
    else if (w === '--') continue;
    else if (w.startsWith('-')) continue;
    else if (ENV_ASSIGNMENT.test(w)) names.push(w.slice(0, w.indexOf('=')));
    else break;
  }
  return chdir;
}

function printfTarget(words: string[], names: string[]): void {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--' || !w.startsWith('-')) return;
    if (w === '-v' && words[i + 1] !== undefined) names.push(words[i + 1]!);
    else if (w.startsWith('-v') && w.length > 2) names.push(w.slice(2));
  }
}

function readTargets(words: string[], names: string[]): void {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^-[a-zA-Z]*a$/.test(w)) {
      if (words[i + 1] !== undefined) names.push(words[++i]!);
    } else if (/^-[a-zA-Z]*[dinNptu]$/.test(w)) i += 1;
    else if (!w.startsWith('-')) names.push(w);
  }
}

function mapfileTarget(words: string[], names: string[]): void {
  const positionals: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^-[a-zA-Z]*[dnOsuCc]$/.test(w)) i += 1;
    else if (!w.startsWith('-')) positionals.push(w);
  }
  if (positionals.length > 0) names.push(positionals.at(-1)!);
}
