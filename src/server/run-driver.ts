import type { InteractionResponse } from '../interaction/index.js';
import type { InteractionRecord, RunRecord } from '../store/index.js';
import type { Role } from './auth.js';
import type { StartRunBody } from './schemas.js';
import type { ServerPolicy } from '../runtime/server-policy.js';
import type { RunPolicy } from '../runtime/run-policy.js';

/** What the server asks of whatever drives runs (the durable runner): everything that writes. */
export interface RunDriver {
  /** The operator's policy: what clients may do to a run's gate and to per-user rules. */
  readonly serverPolicy: ServerPolicy;
  /** What clients may choose when they start a run (models, roots); shown by GET /models and GET /roots. */
  readonly runPolicy?: RunPolicy;
  /**
   * Creates the run in the store (owned by `userId`, channel `web`) and starts driving it; throws
   * PolicyForbiddenError when the request asks for more than the policy allows `role`.
   */
  start(input: StartRunBody & { userId: string; role?: Role }): Promise<RunRecord>;
  /**
   * Claims the answer exactly once and resumes the run, here or on whichever instance holds it.
   * Throws the interaction errors (not found, already answered, expired, cancelled). `known`: the
   * record the caller just read and checked, which spares a read when no other answer to it is
   * under way here (the store's compare-and-set still refuses an answer that lost a race).
   */
  respond(interactionId: string, response: InteractionResponse, known?: InteractionRecord): Promise<InteractionRecord>;
  /** Cancels a running or suspended run; its pending interactions are closed. */
  cancel(runId: string, reason: string): Promise<void>;
  /** Stops driving runs in this process, leaving them resumable from the store. */
  close(): Promise<void>;
}
