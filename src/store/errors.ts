import { SageError } from '../errors/index.js';

/** The database was written by a newer Sage: its schema is past what this code knows. */
export class StoreVersionError extends SageError {
  constructor(
    readonly location: string,
    readonly databaseVersion: number,
    readonly supportedVersion: number,
  ) {
    super(
      'store_version_newer',
      `The store at ${location} has schema version ${databaseVersion}, but this Sage knows versions up to ${supportedVersion}; upgrade Sage to open it (it was not modified).`,
    );
  }
}

/** Opening or talking to the database failed (bad path, unreachable server, bad URL). */
export class StoreUnavailableError extends SageError {
  constructor(
    readonly location: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('store_unavailable', `Cannot use the store at ${location}: ${message}`, options);
  }
}

/** The Postgres URL (SAGE_DATABASE_URL, or the url option) is not one: nothing was contacted. */
export class StoreUrlError extends SageError {
  constructor(
    readonly source: string,
    reason: string,
  ) {
    super('store_url_invalid', `${source} ${reason}; it must be a Postgres URL like postgres://user@host:5432/dbname (a password goes after the user: postgres://user:secret@host:5432/dbname).`);
  }
}

/**
 * A write was refused because this instance no longer holds the run: its lease expired and another
 * instance took the run over. The run must stop here; the new owner continues it.
 */
export class LeaseLostError extends SageError {
  constructor(
    readonly runId: string,
    readonly owner: string,
    readonly currentOwner: string | null,
    /** The claim the refused writer held, and the run's current one (see RunRecord.epoch). */
    readonly claim?: { epoch: number; currentEpoch: number },
  ) {
    super(
      'lease_lost',
      claim && currentOwner === owner
        ? `Run ${runId} was claimed again (claim ${claim.currentEpoch}) since this writer's claim ${claim.epoch}; nothing was written.`
        : `Run ${runId} is no longer driven by ${owner}${currentOwner ? ` (now ${currentOwner})` : ''}; nothing was written.`,
    );
  }
}

export class RunNotFoundError extends SageError {
  constructor(readonly runId: string) {
    super('run_not_found', `No run with id "${runId}" is in the store.`);
  }
}

/** An event seq that is already in the log: the log is append-only. */
export class EventSeqConflictError extends SageError {
  constructor(
    readonly runId: string,
    readonly seq: number,
  ) {
    super('event_seq_conflict', `Run ${runId} already has an event with seq ${seq}; the event log is append-only.`);
  }
}

/** A checkpoint in a format this code cannot read. */
export class CheckpointFormatError extends SageError {
  constructor(
    readonly runId: string,
    readonly format: number,
  ) {
    super('checkpoint_format', `Run ${runId} has a checkpoint in format ${format}, which this Sage cannot read.`);
  }
}

/** Another live instance drives the run (its lease has not expired). */
export class RunBusyError extends SageError {
  constructor(
    readonly runId: string,
    readonly owner: string,
    readonly leaseExpiresAt: string | null,
  ) {
    super('run_busy', `Run ${runId} is being driven by ${owner}${leaseExpiresAt ? ` (lease until ${leaseExpiresAt})` : ''}.`);
  }
}

/**
 * The store stopped answering while in use: the connection was lost or refused (Postgres restarted,
 * a backend was terminated, the network dropped) or the database file cannot be read or written.
 * Transient: what was asked either committed or did not, never half; asking again once the store
 * is back is safe (an answer already recorded is refused as answered).
 */
export class StoreDownError extends StoreUnavailableError {
  readonly retryAfterSeconds = 5;
  constructor(location: string, detail: string, options?: { cause?: unknown }) {
    super(location, `the store is unavailable (store_unavailable: ${detail}); try again in a few seconds — a request already recorded is not applied twice.`, options);
  }
}

/** The disk holding the store is full: nothing more can be written until an operator frees space. */
export class StoreFullError extends SageError {
  readonly retryAfterSeconds = 30;
  constructor(
    readonly location: string,
    options?: { cause?: unknown },
  ) {
    super('disk_full', `The disk holding the store at ${location} is full (disk_full): nothing more can be written until space is freed; try again then — nothing recorded was lost, and a request already recorded is not applied twice.`, options);
  }
}

/** A fault of the store itself (down or full), not of the request: transient, safe to retry. */
export function isStoreFault(error: unknown): error is StoreDownError | StoreFullError {
  return StoreDownError.isInstance(error) || StoreFullError.isInstance(error);
}
