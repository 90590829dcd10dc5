import type { CallSubject } from './call-subject.js';
import { MEDIUM_RISK_COMMANDS } from './command-lists.js';
import { insideRoots, type EvaluationEnv } from './rule-evaluation.js';
import { flagView } from './shell-flags.js';
import type { GateToolInfo, RiskLevel } from './types.js';

/**
 * A risk level, or UNKNOWN. UNKNOWN is deliberately not a RiskLevel: it is never compared as lower
 * than anything and the policy treats it as HIGH.
 */
export type AssessedRisk = RiskLevel | 'UNKNOWN';

const ORDER: Record<AssessedRisk, number> = { LOW: 0, MEDIUM: 1, HIGH: 2, UNKNOWN: 3 };
export function maxRisk(a: AssessedRisk, b: AssessedRisk): AssessedRisk {
  return ORDER[a] >= ORDER[b] ? a : b;
}

/** Programs that can destroy data or take over the machine whatever their arguments (the one list; the Bash tool has none of its own). */
const HIGH_PROGRAMS = new Set([
  'sudo', 'doas', 'su', 'dd', 'mkfs', 'fdisk', 'sfdisk', 'parted', 'wipefs', 'shred', 'mkswap', 'swapoff', 'shutdown', 'reboot', 'halt',
  'poweroff', 'init', 'systemctl', 'crontab', 'visudo', 'passwd', 'userdel', 'iptables', 'mount', 'umount', 'kill', 'killall', 'pkill', 'chroot',
]);
const DOWNLOADERS = new Set(['curl', 'wget']);
/** What runs a downloaded script: shells and the script interpreters (`curl … | python3`). */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'python', 'python3', 'perl', 'ruby', 'node']);
/** `rm` targets so broad that even a non-recursive remove is dangerous. */
const BROAD_TARGETS = new Set(['/', '/*', '~', '~/', '*', '.', '..']);

/** Deterministic risk of one Bash command line. */
function shellRisk(subject: CallSubject, env: EvaluationEnv): AssessedRisk {
  const programs = subject.commands.map((c) => c.program);
  // A download piped into a shell is HIGH whatever else the command shows.
  if (programs.some((p) => DOWNLOADERS.has(p)) && programs.some((p) => SHELLS.has(p))) return 'HIGH';
  if (subject.hard.length > 0 || subject.unknownCwd) return 'UNKNOWN';
  // `PATH=/tmp/x ls` runs whatever /tmp/x/ls is.
  if (subject.dangerousEnv?.length) return 'HIGH';
  let risk: AssessedRisk = 'LOW';
  for (const command of subject.commands) {
    if (command.critical) return 'HIGH';
    for (const layer of command.denyLayers) if (highCommand(layer)) return 'HIGH';
    if (command.readOnly) continue;
    risk = maxRisk(risk, MEDIUM_RISK_COMMANDS.has(command.program) && command.part.inlineCode === undefined ? 'MEDIUM' : 'UNKNOWN');
  }
  if (subject.writes.some((p) => !insideRoots(p, env))) return maxRisk(risk, 'HIGH');
  if (subject.writes.length > 0) risk = maxRisk(risk, 'MEDIUM');
  if (subject.reads.some((p) => !insideRoots(p, env))) risk = maxRisk(risk, 'MEDIUM');
  return risk;
}

function highCommand(words: string[]): boolean {
  const program = words[0] ?? '';
  if (HIGH_PROGRAMS.has(program) || program.startsWith('mkfs')) return true;
  const { flags, positionals } = flagView(program, words.slice(1));
  if (program === 'rm' && (flags.has('-r') || flags.has('-f') || positionals.some((p) => BROAD_TARGETS.has(p)))) return true;
  if ((program === 'chmod' || program === 'chown') && (flags.has('-R') || positionals.includes('777'))) return true;
  if (program === 'git') {
    const sub = positionals[0];
    // `+main` force-pushes that one ref.
    if (sub === 'push' && (flags.has('-f') || [...flags].some((f) => f.startsWith('--force')) || positionals.slice(1).some((p) => p.startsWith('+')))) return true;
    if (sub === 'reset' && flags.has('--hard')) return true;
    if (sub === 'clean' && flags.has('-f')) return true;
  }
  return false;
}

/** The risk of a call: the tool's own view, raised by what the input shows. */
export function classifyRisk(subject: CallSubject, tool: GateToolInfo, input: unknown, env: EvaluationEnv): AssessedRisk {
  let declared: AssessedRisk;
  try {
    declared = tool.risk(input);
  } catch {
    declared = 'UNKNOWN';
  }
  if (subject.toolName === 'Bash') {
    const shell = shellRisk(subject, env);
    // The built-in read-only commands are LOW whatever a generic Bash risk says; otherwise the higher wins.
    return shell === 'LOW' ? 'LOW' : maxRisk(declared, shell);
  }
  if (subject.writes.some((p) => !insideRoots(p, env))) return maxRisk(declared, 'HIGH');
  if (subject.reads.some((p) => !insideRoots(p, env))) return maxRisk(declared, 'MEDIUM');
  if (subject.hard.length > 0) return 'UNKNOWN';
  return declared;
}
