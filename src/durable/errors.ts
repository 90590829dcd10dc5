import { SageError } from '../errors/index.js';

/** The run has finished: it cannot be resumed, and its requests can no longer be answered. */
export class RunFinishedError extends SageError {
  constructor(
    readonly runId: string,
    readonly status: string,
  ) {
    super('run_finished', `Run ${runId} has finished (${status}); it cannot be resumed or answered.`);
  }
}
