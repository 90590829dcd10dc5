import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { styleText } from 'node:util';
import { SageError } from '../errors/index.js';
import { loadSettings, type SettingsProblem } from '../permission/index.js';

/** The loader names rules given on the command line with this pseudo-file. */
const COMMAND_LINE = 'command line';

export const IGNORE_FLAG = '--ignore-broken-settings';

/** The run's own rules as typed (the command line), and whether broken files may be skipped. */
export interface SettingsCheckInput {
  allow: readonly string[];
  ask: readonly string[];
  deny: readonly string[];
  ignoreBrokenSettings?: boolean;
}

/**
 * A settings file that does not load, or a rule that can never match: the run does not start
 * (exit 2). Going on would drop the file's deny rules without anyone deciding that.
 */
export class BrokenSettingsError extends SageError {
  constructor(message: string) {
    super('settings_invalid', message);
  }
}

/**
 * Checks the settings files of `cwd` and the run's --allow/--ask/--deny rules before anything runs.
 * Errors stop the run; with --ignore-broken-settings the broken files (never broken command-line
 * rules: those are fixed where they are typed) are skipped, and `report` says so on stderr.
 * Warnings are left to the gate, which prints them once.
 */
export async function checkSettings(flags: SettingsCheckInput, cwd: string, options: { report: boolean; home?: string; upTo?: string }): Promise<void> {
  const home = options.home ?? process.env.SAGE_HOME ?? homedir();
  const { problems } = loadSettings({ projectRoot: cwd, home, ...(options.upTo ? { upTo: options.upTo } : {}), cli: { allow: [...flags.allow], ask: [...flags.ask], deny: [...flags.deny] } });
  const errors = problems.filter((p) => p.severity === 'error');
  const fromFlags = errors.filter((p) => p.file === COMMAND_LINE);
  const fromFiles = errors.filter((p) => p.file !== COMMAND_LINE);
  if (fromFlags.length > 0) {
    throw new BrokenSettingsError(`${fromFlags.map((p) => describeFlagProblem(p, flags)).join('\n')}\nThe run did not start: fix the rule.`);
  }
  if (fromFiles.length === 0) return;
  if (!flags.ignoreBrokenSettings) {
    throw new BrokenSettingsError(
      `${fromFiles.map(describeFileProblem).join('\n')}\nThe run did not start: fix the settings, or pass ${IGNORE_FLAG} to go on without what is broken (its rules are then NOT applied).`,
    );
  }
  if (!options.report) return;
  for (const problem of fromFiles) {
    process.stderr.write(`${styleText('yellow', 'settings skipped:')} ${describeFileProblem(problem)} — ${skippedPart(problem)} (${IGNORE_FLAG})\n`);
  }
}

/** What the loader leaves out when a file or rule is broken; it keeps what cannot open a door. */
function skippedPart(problem: SettingsProblem): string {
  if (/^permissions\.(allow|ask|deny)\[\d+\]$/.test(problem.key)) return 'this rule is NOT applied';
  if (problem.problem.startsWith('not valid JSON') || problem.problem === 'the file does not exist') return 'the whole file is skipped: none of its rules are applied';
  return 'only its deny and ask rules are applied; its allow rules, hooks and other settings are NOT';
}

function describeFlagProblem(problem: SettingsProblem, flags: SettingsCheckInput): string {
  const match = /^permissions\.(allow|ask|deny)\[(\d+)\]$/.exec(problem.key);
  const rule = match ? flags[match[1] as 'allow' | 'ask' | 'deny'][Number(match[2])] : undefined;
  return match && rule !== undefined ? `--${match[1]} ${JSON.stringify(rule)}: ${problem.problem}` : `command line ${problem.key}: ${problem.problem}`;
}

/** "FILE, line L, column C, field K: problem", with as much of the place as can be found. */
export function describeFileProblem(problem: SettingsProblem): string {
  const place = locate(problem);
  const at = place ? `, line ${place.line}${place.column ? `, column ${place.column}` : ''}` : '';
  return `${problem.file}${at}, field ${problem.key}: ${problem.problem}`;
}

function locate(problem: SettingsProblem): { line: number; column?: number } | undefined {
  let text: string;
  try {
    text = readFileSync(problem.file, 'utf8');
  } catch {
    return undefined;
  }
  // V8 names the offset of a syntax error ("… in JSON at position 42"); Node 20 gives no line.
  const position = /at position (\d+)/.exec(problem.problem);
  if (position) return lineAndColumn(text, Number(position[1]));
  if (/end of JSON input/.test(problem.problem)) return lineAndColumn(text, text.length);
  // A field or a rule: the first place its key (or the rule's own text) appears.
  const needle = needleFor(problem, text);
  const at = needle === undefined ? -1 : text.indexOf(needle);
  return at >= 0 ? { line: lineAndColumn(text, at).line } : undefined;
}

function needleFor(problem: SettingsProblem, text: string): string | undefined {
  const rule = /^permissions\.(allow|ask|deny)\[(\d+)\]$/.exec(problem.key);
  if (rule) {
    try {
      const value = (JSON.parse(text) as { permissions?: Record<string, unknown[]> }).permissions?.[rule[1]!]?.[Number(rule[2])];
      return typeof value === 'string' ? JSON.stringify(value) : undefined;
    } catch {
      return undefined;
    }
  }
  const last = problem.key.split('.').filter((part) => part !== '(root)' && !/^\d+$/.test(part)).at(-1);
  return last === undefined ? undefined : JSON.stringify(last);
}

/** 1-based line and column of a character offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines.at(-1)!.length + 1 };
}
