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

/**
 * The operator's configuration is one the server or run factory refuses to run with (no auth on a
 * public address, a bad tokens or settings file, a root that does not exist). It lives here, not in
 * src/server, because the run and server policies that throw it are part of building a run.
 */
export class ServerConfigError extends SageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('server_config', message, options);
  }
}

/** A stored run's permission settings (`options.metadata`) do not validate, so no gate can be built for it. */
export class RunOptionsError extends SageError {
  constructor(readonly runId: string) {
    super('run_options_invalid', `Run ${runId} has permission settings this server cannot read.`);
  }
}

/** A per-user limit is reached (runs in flight, pending interactions, open event streams). */
export class TooManyRequestsError extends SageError {
  constructor(
    code: 'too_many_runs' | 'too_many_pending_interactions' | 'too_many_streams',
    message: string,
    readonly limit: number,
  ) {
    super(code, message);
  }
}
