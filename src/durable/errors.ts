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

/**
 * A stored run could not be rebuilt in this process — its options do not validate, its model
 * cannot be built (a scripted model now disabled, a provider key missing), its tools or gate fail
 * — so it was marked failed with this error (code and message in the run's record and its
 * `run.failed` event) instead of stopping the process that tried.
 */
export class RunRebuildError extends SageError {
  constructor(
    readonly runId: string,
    readonly part: 'options' | 'model' | 'tools' | 'gate',
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super('run_rebuild_failed', `Run ${runId} cannot be resumed: ${PART_TEXT[part]} ${reason}`, options);
  }
}

const PART_TEXT: Record<RunRebuildError['part'], string> = {
  options: 'its stored options do not validate:',
  model: 'its model cannot be built:',
  tools: 'its tools cannot be built:',
  gate: 'its permission gate cannot be built:',
};

/**
 * A stored run was not resumed because the settings files of its cwd do not load (fail closed):
 * it is left as it was — not failed, not resumed — for a person to fix the file (the message
 * names the file, line and field) and recover it again.
 */
export class RunLeftError extends SageError {
  constructor(
    readonly runId: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super('run_left', `Run ${runId} was left as it is: ${reason}`, options);
  }
}
