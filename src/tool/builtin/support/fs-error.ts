/** Node's system errors carry a `code` such as ENOENT; this narrows to them. */
export function isErrnoError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
}

/**
 * Turns an error into one sentence for the model. OS errors are named by what they mean (the
 * model cannot look up errno codes reliably), with the path they concern when known.
 */
export function describeFsError(error: unknown, path?: string): string {
  if (!isErrnoError(error)) return error instanceof Error ? error.message : String(error);
  const target = path ?? error.path ?? 'the path';
  switch (error.code) {
    case 'ENOENT':
      return `${target} does not exist.`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied by the operating system for ${target} (${error.code}); this account may not access it.`;
    case 'EISDIR':
      return `${target} is a directory, not a file.`;
    case 'ENOTDIR':
      return `a part of ${target} is a file, not a directory (ENOTDIR).`;
    case 'ELOOP':
      return `${target} has too many levels of symbolic links.`;
    case 'ENAMETOOLONG':
      return `the path ${target} is too long.`;
    case 'EROFS':
      return `${target} is on a read-only file system.`;
    case 'ENOSPC':
      return `no space left on the device while writing ${target}.`;
    case 'EMFILE':
    case 'ENFILE':
      return `too many open files; try again with a narrower request.`;
    default:
      return `${error.message}${error.code ? ` (${error.code})` : ''}`;
  }
}
