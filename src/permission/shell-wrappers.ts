import type { ShellWord } from './shell-words.js';

/** What stripping one layer off a command revealed. */
export type Unwrapped =
  /** A wrapper (`nohup`, `sudo`, `env`…) around an inner command. */
  | { kind: 'wrapper'; inner: ShellWord[]; harmless: boolean }
  /** `bash -c`, `eval`, `watch`: a shell script in a string; undefined when it is not literal. */
  | { kind: 'script'; script: string | undefined }
  /** `find -exec`: commands run per file. */
  | { kind: 'exec'; commands: ShellWord[][] }
  /** `python -c`, `node -e`: code we do not analyse. */
  | { kind: 'inline'; code: ShellWord };

/** `/bin/rm`, `./rm` and `rm` are the same program to deny and ask rules. */
export function programName(word: ShellWord | undefined): string {
  if (!word) return '';
  const v = word.value;
  const slash = v.lastIndexOf('/');
  return slash >= 0 ? v.slice(slash + 1) : v;
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'busybox', 'fish']);
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
  env: new Set(['-u', '--unset', '-C', '--chdir']),
  stdbuf: new Set(['-i', '-o', '-e']),
  watch: new Set(['-n', '--interval', '-d']),
  exec: new Set(['-a']),
  chrt: new Set([]), setsid: new Set([]), nohup: new Set([]), time: new Set([]), command: new Set([]), builtin: new Set([]),
  taskset: new Set([]), flock: new Set(['-w', '-E']), caffeinate: new Set([]), unbuffer: new Set([]),
};
// Wrappers an allow rule may look through: they change nothing about what the inner command does.
const HARMLESS = new Set(['nohup', 'time', 'timeout', 'nice', 'command', 'builtin', 'stdbuf']);

/** Strips one wrapper layer, or says what kind of payload the command carries. */
export function unwrapOnce(argv: ShellWord[]): Unwrapped | undefined {
  const name = programName(argv[0]);
  if (SHELLS.has(name)) return shellScript(argv);
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
  let i = 1;
  while (i < argv.length) {
    const w = argv[i]!.value;
    if (w === '--') { i += 1; break; }
    if (name === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) { i += 1; continue; }
    if (name === 'env' && (w === '-S' || w === '--split-string')) return joinedScript(argv.slice(i + 1));
    if (!w.startsWith('-') || w === '-') break;
    i += valueOptions.has(w) ? 2 : 1;
  }
  if (name === 'timeout') i += 1; // the duration
  if (name === 'nice' && /^-\d+$/.test(argv[1]?.value ?? '')) i = Math.max(i, 2);
  if (name === 'watch') return joinedScript(argv.slice(i));
  const inner = argv.slice(i);
  if (inner.length === 0) return undefined;
  const harmless = HARMLESS.has(name) && argv[0]!.value === name;
  return { kind: 'wrapper', inner, harmless: name === 'env' ? false : harmless };
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
