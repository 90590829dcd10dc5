import path from 'node:path';
import type { PermissionSuggestion } from '../interaction/index.js';
import { escapeBashPattern } from './bash-pattern.js';
import type { CallSubject } from './call-subject.js';
import { escapeGlob } from './path-pattern.js';
import { EDIT_FAMILY, READ_FAMILY } from './rule.js';

type Destination = PermissionSuggestion['destination'];

/**
 * Rules a person may save with an "always" answer. Never broader than what the person saw: one
 * rule per part of a compound command, glob characters escaped, and none at all when the command
 * has parts the prompt cannot show faithfully (expansions, opaque code, parse errors).
 */
export function suggestRules(subject: CallSubject, cwd: string, destination: Destination = 'session'): PermissionSuggestion[] {
  if (subject.hard.length > 0 || subject.unknownCwd) return [];
  const rules: string[] = [];
  if (subject.toolName === 'Bash') {
    for (const command of subject.commands) {
      if (command.readOnly || !command.allowWords) continue;
      if (command.part.argv.some((w) => w.dynamic || w.glob) || command.allowWords.length !== 1) return [];
      rules.push(`Bash(${escapeBashPattern(command.allowWords[0]!.join(' '))})`);
    }
    // Redirect targets need their own Edit rule; an exact one per file.
    for (const p of subject.writes) if (p.redirect) rules.push(`Edit(${pathSpecifier(p.abs, cwd)})`);
  } else if (READ_FAMILY.has(subject.toolName) || EDIT_FAMILY.has(subject.toolName)) {
    const family = READ_FAMILY.has(subject.toolName) ? 'Read' : 'Edit';
    const paths = family === 'Read' ? subject.reads : subject.writes;
    if (paths.some((p) => p.recursive)) return [];
    for (const p of paths) rules.push(`${family}(${pathSpecifier(p.abs, cwd)})`);
  } else if (subject.resource === undefined) {
    rules.push(subject.toolName);
  }
  return [...new Set(rules)].map((rule) => ({ type: 'addRule', toolName: rule.replace(/\(.*$/s, ''), rule, behavior: 'allow', destination }));
}

/** `./rel/path` inside the working directory, `//abs/path` elsewhere; glob characters escaped. */
function pathSpecifier(abs: string, cwd: string): string {
  const rel = path.relative(cwd, abs);
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return `./${escapeGlob(rel)}`;
  return `/${escapeGlob(abs)}`;
}
