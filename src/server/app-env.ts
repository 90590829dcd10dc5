import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { Principal } from './auth.js';
import type { RunDriver } from './run-driver.js';
import type { StreamSlot, UserLimits } from '../runtime/user-limits.js';

/** What every route handler can reach: the caller and the server's parts. */
export interface AppDeps {
  store: Store;
  driver: RunDriver;
  logger: Logger;
  /** Whether bearer tokens are required (false only on loopback). */
  auth: boolean;
  startedAt: number;
  /** Set once a graceful shutdown began: new runs and streams are refused. */
  isShuttingDown(): boolean;
  /** Registers an open SSE stream so shutdown can end it; returns the unregister function. */
  trackStream(abort: () => void): () => void;
  /** Per-user limits on runs in flight, pending interactions and open event streams. */
  limits: UserLimits;
}

/** `streamSlot`: the caller's place in the per-user stream count, reserved before a streaming route runs. */
export type AppEnv = { Variables: { principal: Principal; streamSlot?: StreamSlot } };
