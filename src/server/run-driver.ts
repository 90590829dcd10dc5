import type { InteractionResponse } from '../interaction/index.js';
import type { InteractionRecord, RunRecord } from '../store/index.js';
import type { StartRunBody } from './schemas.js';

/** What the server asks of whatever drives runs (the durable runner): everything that writes. */
export interface RunDriver {
  /** Creates the run in the store (owned by `userId`, channel `web`) and starts driving it. */
  start(input: StartRunBody & { userId: string }): Promise<RunRecord>;
  /**
   * Claims the answer exactly once and resumes the run, here or on whichever instance holds it.
   * Throws the interaction errors (not found, already answered, expired, cancelled).
   */
  respond(interactionId: string, response: InteractionResponse): Promise<InteractionRecord>;
  /** Cancels a running or suspended run; its pending interactions are closed. */
  cancel(runId: string, reason: string): Promise<void>;
  /** Stops driving runs in this process, leaving them resumable from the store. */
  close(): Promise<void>;
}
