import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DeniedPath } from '../permission/types.js';

/** A path hidden inside the sandbox: an empty file, or an empty read-only folder, is mounted over it. */
export interface Mask {
  path: string;
  folder: boolean;
}

/** Directory entries one rule's search may look at before it gives up (and says so). */
const MAX_ENTRIES = 20_000;
/** Kernel file systems: nothing a rule names lives there, and walking them is slow. */
const SKIPPED = new Set(['/proc', '/sys', '/dev']);

/**
 * The existing files and folders the run's Read deny rules name, to be masked inside the agent's
 * sandbox. A rule without a glob names one path; a glob is matched against what exists now, under
 * its literal start (`~/.ssh/**` → `~/.ssh`), or under the sandbox's visible folders (`roots`: the
 * run's folders) when it names no folder (`.env`, `*.pem` at any depth). A file created later, a
 * hard link elsewhere, or a search cut at MAX_ENTRIES is not masked: `incomplete` names those rules.
 */
export function masksFor(denied: readonly DeniedPath[], roots: readonly string[]): { masks: Mask[]; incomplete: string[] } {
  const masks = new Map<string, Mask>();
  const incomplete: string[] = [];
  const add = (path: string) => {
    const real = realOrUndefined(path);
    if (!real || real === '/') return;
    masks.set(real, { path: real, folder: statSync(real, { throwIfNoEntry: false })?.isDirectory() ?? false });
  };
  for (const rule of denied) {
    const start = literalStart(rule.glob);
    if (start.exact) {
      if (lstatSync(start.path, { throwIfNoEntry: false })) add(start.path);
      continue;
    }
    const bases = start.path === '' || start.path === '/' ? roots : [start.path];
    let budget = MAX_ENTRIES;
    for (const base of bases) {
      const real = realOrUndefined(base);
      if (!real) continue;
      budget = walk(real, rule, add, budget);
      if (budget < 0) break;
    }
    if (budget < 0) incomplete.push(rule.rule);
  }
  return { masks: [...masks.values()], incomplete };
}

/** Walks `root` top-down: a matching entry is masked whole and not entered. Returns the budget left (negative: cut short). */
function walk(root: string, rule: DeniedPath, add: (path: string) => void, budget: number): number {
  const queue = [root];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    if (rule.matches(dir)) {
      add(dir);
      continue;
    }
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (--budget < 0) return budget;
      const path = join(dir, entry.name);
      if (SKIPPED.has(path)) continue;
      if (entry.isDirectory()) queue.push(path);
      else if (rule.matches(path)) add(path);
    }
  }
  return budget;
}

/** The part of an absolute glob before its first unescaped glob character, cut at a `/`; `exact` when there is none. */
function literalStart(glob: string): { path: string; exact: boolean } {
  let literal = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\' && i + 1 < glob.length) {
      literal += glob[++i];
      continue;
    }
    if ('*?[{'.includes(c)) return { path: literal.slice(0, literal.lastIndexOf('/') + 1).replace(/(.)\/$/, '$1'), exact: false };
    literal += c;
  }
  return { path: literal, exact: true };
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
