import path from 'node:path';

/** Absolute paths stay as they are; relative ones are taken from the run's working directory. */
export function resolvePath(cwd: string, filePath: string): string {
  return path.resolve(cwd, filePath);
}

/**
 * How a path is shown to the model in lists: relative to the working directory when inside it
 * (shorter, and Read accepts it), absolute otherwise so it is never ambiguous.
 */
export function displayPath(cwd: string, absolutePath: string): string {
  const relative = path.relative(cwd, absolutePath);
  if (relative === '') return '.';
  if (relative.startsWith('..') || path.isAbsolute(relative)) return absolutePath;
  return relative.split(path.sep).join('/');
}
