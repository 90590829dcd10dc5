import { SageError } from '../errors/index.js';

/** The trusted-folders file cannot be read: no folder is trusted until it is fixed (exit 1). */
export class TrustFileError extends SageError {
  constructor(message: string) {
    super('trust_file_invalid', message);
  }
}
