import path from 'node:path';
import type { CallSubject } from './call-subject.js';
import { SHELL_STARTUP_FILES } from './command-lists.js';

const PROTECTED_SEGMENTS = new Set(['.git', '.sage']);

/**
 * Writes into `.git`, `.sage` or shell start-up files are asked in every mode but bypass, whatever
 * the allow rules say: they change what later runs (hooks, settings, every new shell).
 */
const startupByHome = new Map<string, Set<string>>();

export function protectedWrite(subject: CallSubject, home: string): string | undefined {
  if (subject.writes.length === 0) return undefined;
  let startup = startupByHome.get(home);
  if (!startup) {
    startup = new Set(SHELL_STARTUP_FILES.map((f) => path.join(home, f).toLowerCase()));
    startupByHome.set(home, startup);
  }
  for (const p of subject.writes) {
    for (const candidate of [p.abs, p.real]) {
      const lower = candidate.toLowerCase();
      if (lower.split('/').some((segment) => PROTECTED_SEGMENTS.has(segment))) return `it writes ${p.raw}, inside a .git or .sage folder`;
      if (startup.has(lower)) return `it writes ${p.raw}, a shell start-up file`;
    }
  }
  return undefined;
}

/** `rm` of `/`, home, the project or a parent: asked in every mode, bypass included. */
export function criticalRemoval(subject: CallSubject): string | undefined {
  return subject.commands.find((c) => c.critical)?.critical;
}
