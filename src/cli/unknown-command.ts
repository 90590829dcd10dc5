import { UsageError } from './usage-error.js';

/**
 * `sage frobnicate`: names the word as an unknown command, with the closest command (if one is
 * close) and the list. A task is not a command: it goes with `sage run`.
 */
export function unknownCommandError(word: string, commands: readonly string[]): UsageError {
  const closest = commands
    .map((name) => ({ name, distance: editDistance(word.toLowerCase(), name) }))
    .filter((c) => c.distance <= Math.min(2, Math.max(1, c.name.length - 2)))
    .sort((a, b) => a.distance - b.distance)[0];
  const hint = closest ? ` Did you mean "${closest.name}"?` : '';
  const task = /\s/.test(word.trim()) ? ` To run a task: sage run ${JSON.stringify(word)}.` : '';
  return new UsageError(`unknown command ${JSON.stringify(word)}.${hint}${task} Commands: ${commands.join(', ')} (sage --help).`);
}

/** Levenshtein distance; the command names are short, so the plain table is enough. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = current;
  }
  return previous[b.length]!;
}
