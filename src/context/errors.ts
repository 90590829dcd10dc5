import { SageError } from '../errors/index.js';

/** The summariser failed or answered nothing; the conversation is left as it was. */
export class ContextCompactionError extends SageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('context_compaction_failed', message, options);
  }
}
