import { StoreDownError, StoreFullError, isStoreFault } from './errors.js';

/** Postgres SQLSTATEs that mean the server or the connection went away, not that the statement was wrong. */
const PG_DOWN = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
]);
/** Node socket errors on the way to a database server. */
const NET_DOWN = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);
/** What `pg` says, with no code, when the socket closed under it or a client can no longer be used. */
const PG_LOST = /Connection terminated|not queryable|Connection ended|timeout exceeded when trying to connect|terminating connection/i;

/**
 * The fault `error` is, when it says the store is down or full rather than that the request was
 * wrong; undefined otherwise (the error is passed on as it is). `location` names the store.
 */
export function storeFault(error: unknown, location: string): StoreDownError | StoreFullError | undefined {
  if (isStoreFault(error)) return error;
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : '';
  if (typeof code === 'string') {
    // SQLite: SQLITE_FULL (and its extended codes); Postgres: disk_full (53100).
    if (code === 'SQLITE_FULL' || code === '53100' || code === 'ENOSPC') return new StoreFullError(location, { cause: error });
    if (code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_') || code === 'SQLITE_CANTOPEN' || code === 'EIO') return new StoreDownError(location, `cannot read or write the database file: ${message}`, { cause: error });
    if (PG_DOWN.has(code) || code.startsWith('08')) return new StoreDownError(location, message, { cause: error });
    if (NET_DOWN.has(code)) return new StoreDownError(location, `${code}: cannot reach the database server`, { cause: error });
  }
  // A full disk reported through an I/O error's message (SQLite's extended codes vary by build).
  if (/database or disk is full|No space left on device/i.test(message)) return new StoreFullError(location, { cause: error });
  if (PG_LOST.test(message)) return new StoreDownError(location, message, { cause: error });
  return undefined;
}

/**
 * What the store was like at its last use: `ok`, or down or full since the fault it reports. Any
 * statement that succeeds clears it; a disk-full state is cleared only by a write that succeeds.
 */
export class StoreHealth {
  private fault: StoreDownError | StoreFullError | undefined;
  private since: number | undefined;

  /** Passes `error` through `storeFault`: returns what to throw, noting a fault. */
  failed(error: unknown, location: string): unknown {
    const fault = storeFault(error, location);
    if (!fault) return error;
    if (!this.fault || this.fault.code !== fault.code) this.since = Date.now();
    this.fault = fault;
    return fault;
  }

  /**
   * Runs one statement's `work`, noting its success and turning its failure into the fault it is
   * (StoreDownError, StoreFullError) or passing it on; `wrote`: the statement writes.
   */
  async guard<T>(location: string, wrote: boolean, work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      this.succeeded(wrote);
      return result;
    } catch (error) {
      throw this.failed(error, location);
    }
  }

  /** A statement succeeded; `wrote`: it wrote (the only proof a full disk has room again). */
  succeeded(wrote: boolean): void {
    if (!this.fault) return;
    if (this.fault.code === 'disk_full' && !wrote) return;
    this.fault = undefined;
    this.since = undefined;
  }

  report(): StoreHealthReport {
    if (!this.fault) return { status: 'ok' };
    return { status: this.fault.code === 'disk_full' ? 'disk_full' : 'unavailable', code: this.fault.code, message: this.fault.message, since: new Date(this.since ?? Date.now()).toISOString() };
  }
}

export interface StoreHealthReport {
  status: 'ok' | 'unavailable' | 'disk_full';
  /** The error code clients see meanwhile: `store_unavailable` or `disk_full`. */
  code?: string;
  message?: string;
  /** When the fault was first seen. */
  since?: string;
}
