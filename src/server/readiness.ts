import { SageError } from '../errors/index.js';
import { StoreDownError, StoreFullError, type Store, type StoreHealthReport } from '../store/index.js';

/** The server is stopping: it takes no new work (readiness says so before the socket closes). */
export class ShuttingDownError extends SageError {
  readonly retryAfterSeconds = 5;
  constructor() {
    super('shutting_down', 'The server is shutting down; try again on another instance or once it is back.');
  }
}

/** The store's last-seen state in the shape /healthz and /readyz answer with. */
export function storeState(report: StoreHealthReport | undefined): { storeStatus: StoreHealthReport['status']; storeError?: { code: string; message: string; since: string } } {
  if (!report || report.status === 'ok') return { storeStatus: 'ok' };
  return { storeStatus: report.status, storeError: { code: report.code ?? 'store_unavailable', message: report.message ?? '', since: report.since ?? new Date().toISOString() } };
}

/** How long a readiness ping may take before the store counts as down, ms. */
const PING_TIMEOUT_MS = 2_000;

/**
 * Asks the store one round trip per check, never more than one at a time: a load balancer probing
 * every instance often (or anyone, the route is public) shares the ping in flight.
 */
export class ReadinessProbe {
  private inFlight: Promise<void> | undefined;

  constructor(private readonly store: Store) {}

  /** Resolves when the store answers and has room; rejects with StoreDownError or StoreFullError. */
  check(): Promise<void> {
    this.inFlight ??= this.ping().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async ping(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreDownError(this.store.location, `no answer within ${PING_TIMEOUT_MS / 1000} s`)), PING_TIMEOUT_MS);
      timer.unref();
    });
    try {
      await Promise.race([this.store.ping ? this.store.ping() : this.store.schemaVersion(), timeout]);
    } finally {
      clearTimeout(timer);
    }
    // Reads work on a full disk: it is ready again only once a write succeeded.
    const health = this.store.health?.();
    if (health?.status === 'disk_full') throw new StoreFullError(this.store.location);
  }
}
