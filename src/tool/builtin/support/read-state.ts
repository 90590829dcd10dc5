import type { ToolContext } from '../../types.js';

/** The runState key under which Read records what the run has seen: absolute path → mtimeMs. */
export const READ_FILES_KEY = 'readFiles';

function readFiles(ctx: Pick<ToolContext, 'runState'>): Map<string, number> {
  let files = ctx.runState.get(READ_FILES_KEY);
  if (!(files instanceof Map)) {
    files = new Map<string, number>();
    ctx.runState.set(READ_FILES_KEY, files);
  }
  return files as Map<string, number>;
}

/** Remembers that the run has seen this file as it was at `mtimeMs`. */
export function recordRead(ctx: Pick<ToolContext, 'runState'>, absolutePath: string, mtimeMs: number): void {
  readFiles(ctx).set(absolutePath, mtimeMs);
}

/**
 * The read-first rule of Write and Edit: the model must not clobber a file it has not seen, nor
 * one that changed on disk since it looked (a person or a tool may have edited it meanwhile).
 * Returns the reason to refuse, or undefined when the change may go ahead.
 */
export function readFirstViolation(
  ctx: Pick<ToolContext, 'runState'>,
  absolutePath: string,
  currentMtimeMs: number,
): string | undefined {
  const seen = readFiles(ctx).get(absolutePath);
  if (seen === undefined) {
    return `${absolutePath} exists but has not been read in this run. Use the Read tool on it first, then try again.`;
  }
  if (seen !== currentMtimeMs) {
    return `${absolutePath} was modified on disk since you last read it. Read it again to see its current content, then try again.`;
  }
  return undefined;
}
