import { SageError } from '../errors/index.js';

/** A mistake in the command line itself: exit code 2, one clear line. */
export class UsageError extends SageError {
  constructor(message: string) {
    super('usage_error', message);
  }
}
