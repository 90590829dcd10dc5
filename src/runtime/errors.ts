import { SageError } from '../errors/index.js';

/** A stored run's RunSpec does not validate: names the run and the field. */
export class RunSpecError extends SageError {
  constructor(
    readonly runId: string,
    readonly detail: string,
  ) {
    super('run_spec_invalid', `Run ${runId} has a stored RunSpec that does not validate: ${detail}`);
  }
}
