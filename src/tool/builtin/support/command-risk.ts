import type { RiskLevel } from '../../../permission/types.js';

/**
 * A deterministic risk classifier for shell commands. It does not parse bash fully: it splits the
 * command into simple commands on unquoted `; & && || | newline`, and judges each by its program
 * and arguments. Anything it cannot vouch for is MEDIUM, so the gate asks by default.
 */

/** Programs that only look at things (when not writing through a redirection). */
const READ_ONLY_PROGRAMS = new Set([
  'ls', 'cat', 'head', 'tail', 'pwd', 'echo', 'printf', 'grep', 'egrep', 'fgrep', 'rg', 'wc', 'which',
  'type', 'whoami', 'id', 'uname', 'date', 'stat', 'file', 'du', 'df', 'tree', 'sort', 'uniq', 'cut',
  'diff', 'cmp', 'basename', 'dirname', 'realpath', 'readlink', 'true', 'false', 'test', '[', 'less',
  'more', 'nl', 'od', 'hexdump', 'xxd', 'md5sum', 'sha1sum', 'sha256sum', 'tr', 'column', 'jq', 'env',
  'printenv', 'hostname', 'uptime', 'ps', 'cd',
]);

/** Read-only subcommands of git. */
const READ_ONLY_GIT = new Set(['status', 'log', 'diff', 'show', 'blame', 'rev-parse', 'ls-files', 'describe', 'shortlog', 'grep']);

/** Programs that can destroy data or take over the machine whatever their arguments. */
const HIGH_PROGRAMS = new Set([
  'sudo', 'su', 'doas', 'dd', 'fdisk', 'sfdisk', 'parted', 'wipefs', 'shred', 'shutdown', 'reboot', 'halt',
  'poweroff', 'init', 'mkswap', 'swapoff', 'iptables', 'chroot', 'crontab', 'visudo', 'userdel', 'passwd',
]);

/** `rm` targets so broad that even a non-recursive remove is dangerous. */
const BROAD_TARGETS = new Set(['/', '/*', '~', '~/', '*', '.', '..']);

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'python', 'python3', 'perl', 'ruby', 'node']);

interface SimpleCommand {
  words: string[];
  /** The operator that joined it to the previous command (`|` matters for `curl | sh`). */
  joinedBy: string;
  /** Has a `>` or `>>` redirection to something other than /dev/null or an fd. */
  writesFile: boolean;
}

/** Splits on unquoted operators; quotes and backslashes are honoured, expansions are kept as text. */
function splitCommands(command: string): { commands: SimpleCommand[]; hasSubstitution: boolean } {
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  let joinedBy = '';
  let writesFile = false;
  let pendingRedirect = false;
  let hasSubstitution = false;

  const endWord = (): void => {
    if (!inWord) return;
    if (pendingRedirect) {
      if (word !== '/dev/null' && !word.startsWith('&')) writesFile = true;
      pendingRedirect = false;
    } else {
      words.push(word);
    }
    word = '';
    inWord = false;
  };
  const endCommand = (operator: string): void => {
    endWord();
    if (words.length > 0 || writesFile) commands.push({ words, joinedBy, writesFile });
    words = [];
    writesFile = false;
    joinedBy = operator;
  };

  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
      continue;
    }
    if (ch === '\\' && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
      continue;
    }
    if (ch === '`' || (ch === '$' && command[i + 1] === '(')) hasSubstitution = true;
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else word += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === ' ' || ch === '\t') {
      endWord();
    } else if (ch === '\n' || ch === ';') {
      endCommand(';');
    } else if (ch === '&' || ch === '|') {
      const double = command[i + 1] === ch;
      if (ch === '&' && command[i + 1] === '>') continue; // `&>file` redirects both streams.
      endCommand(double ? ch + ch : ch);
      if (double) i++;
    } else if (ch === '>' || ch === '<') {
      const fdPrefix = /^\d*$/.test(word);
      if (fdPrefix) {
        word = '';
        inWord = false;
      } else {
        endWord();
      }
      if (command[i + 1] === '>') i++;
      if (ch === '>') {
        if (command[i + 1] === '&') {
          i++; // `>&2`: duplicates a descriptor.
          while (/\d/.test(command[i + 1] ?? '')) i++;
        } else {
          pendingRedirect = true;
        }
      }
    } else {
      word += ch;
      inWord = true;
    }
  }
  endCommand('');
  return { commands, hasSubstitution };
}

function programOf(words: string[]): { program: string; args: string[] } {
  let index = 0;
  // Skip `VAR=value` prefixes and wrappers that run the rest as a command.
  while (index < words.length) {
    const w = words[index]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || w === 'time' || w === 'nohup' || w === 'exec' || w === 'command') index++;
    else break;
  }
  const program = (words[index] ?? '').split('/').pop() ?? '';
  return { program, args: words.slice(index + 1) };
}

function hasFlag(args: string[], short: string, long?: string): boolean {
  return args.some(
    (a) => (long !== undefined && a === long) || (/^-[A-Za-z]+$/.test(a) && a.slice(1).includes(short)),
  );
}

function isHigh(cmd: SimpleCommand, previous: SimpleCommand | undefined): boolean {
  const { program, args } = programOf(cmd.words);
  if (HIGH_PROGRAMS.has(program) || program.startsWith('mkfs')) return true;
  if (program === 'rm' && (hasFlag(args, 'r', '--recursive') || hasFlag(args, 'R') || args.some((a) => BROAD_TARGETS.has(a)))) return true;
  if ((program === 'chmod' || program === 'chown') && hasFlag(args, 'R', '--recursive')) return true;
  if (program === 'kill' && args.includes('-1')) return true;
  if (program === 'find' && args.includes('-delete')) return true;
  if (program === 'git') {
    const sub = args.find((a) => !a.startsWith('-'));
    if (sub === 'push' && args.some((a) => a === '--force' || a === '-f' || a.startsWith('--force-with-lease') || a.startsWith('+'))) return true;
    if (sub === 'reset' && args.includes('--hard')) return true;
    if (sub === 'clean' && args.some((a) => /^-[a-zA-Z]*f/.test(a) || a === '--force')) return true;
  }
  // `curl … | sh`: runs whatever a server sends.
  if (cmd.joinedBy === '|' && SHELLS.has(program) && previous) {
    const before = programOf(previous.words).program;
    if (before === 'curl' || before === 'wget') return true;
  }
  // Writing straight to a disk device.
  if (cmd.writesFile && cmd.words.some((w) => w.startsWith('/dev/sd') || w.startsWith('/dev/nvme'))) return true;
  return false;
}

function isReadOnly(cmd: SimpleCommand): boolean {
  if (cmd.writesFile) return false;
  const { program, args } = programOf(cmd.words);
  if (program === 'git') {
    const sub = args.find((a) => !a.startsWith('-'));
    if (sub === 'branch') return args.every((a) => a === 'branch' || a === '-a' || a === '-r' || a === '--list' || a === '-v' || a === '-vv');
    return sub !== undefined && READ_ONLY_GIT.has(sub);
  }
  if (program === 'find') return !args.some((a) => a === '-exec' || a === '-execdir' || a === '-ok' || a === '-delete' || a.startsWith('-fprint'));
  if (program === 'sed') return !args.some((a) => a.startsWith('-i') || a === '--in-place');
  if (program === 'sort') return !args.some((a) => a === '-o' || a.startsWith('--output'));
  return READ_ONLY_PROGRAMS.has(program);
}

/**
 * Classifies a shell command: HIGH for destructive or privilege-raising commands (`rm -rf`,
 * `sudo`, `dd`, `mkfs`, `git push --force`, `curl … | sh`), LOW when every part only reads
 * (`ls`, `cat`, `git status`, `grep`), MEDIUM otherwise.
 *
 * @example classifyCommandRisk('git push --force origin main') // 'HIGH'
 */
export function classifyCommandRisk(command: string): RiskLevel {
  const { commands, hasSubstitution } = splitCommands(command);
  // A fork bomb defines a function that pipes into itself.
  if (/:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:/.test(command)) return 'HIGH';
  let previous: SimpleCommand | undefined;
  for (const cmd of commands) {
    if (isHigh(cmd, previous)) return 'HIGH';
    previous = cmd;
  }
  // The text inside `$(…)` also runs; judge it as well rather than trusting the outer command.
  const inner = [...command.matchAll(/\$\(([^()]*)\)|`([^`]*)`/g)].map((m) => m[1] ?? m[2] ?? '');
  if (inner.some((text) => classifyCommandRisk(text) === 'HIGH')) return 'HIGH';
  if (commands.length === 0) return 'MEDIUM';
  if (hasSubstitution) return 'MEDIUM';
  return commands.every(isReadOnly) ? 'LOW' : 'MEDIUM';
}
