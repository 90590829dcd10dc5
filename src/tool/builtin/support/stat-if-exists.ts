import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { isErrnoError } from './fs-error.js';

/** Stats a path: undefined when it does not exist; any other OS error (EACCES, ENOTDIR) is thrown. */
export async function statIfExists(file: string): Promise<Stats | undefined> {
  try {
    return await stat(file);
  } catch (error) {
    if (isErrnoError(error) && error.code === 'ENOENT') return undefined;
    throw error;
  }
}
