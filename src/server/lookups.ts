import type { InteractionRecord, RunRecord, Store } from '../store/index.js';
import { assertAccess } from './access.js';
import type { Principal } from './auth.js';
import { NotFoundError } from './errors.js';

/** The run, if it exists and the caller may see it (404 / 403 otherwise). */
export async function runFor(store: Store, principal: Principal, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  if (!run) throw new NotFoundError('run_not_found', `No run with id "${runId}".`);
  assertAccess(principal, run.userId, `Run "${runId}"`);
  return run;
}

/** The interaction and its run, if both exist and the caller owns the run. */
export async function interactionFor(store: Store, principal: Principal, interactionId: string): Promise<{ record: InteractionRecord; run: RunRecord }> {
  const record = await store.getInteraction(interactionId);
  if (!record) throw new NotFoundError('interaction_not_found', `No interaction with id "${interactionId}".`);
  const run = await store.getRun(record.runId);
  if (!run) throw new NotFoundError('interaction_not_found', `No interaction with id "${interactionId}".`);
  assertAccess(principal, run.userId, `Interaction "${interactionId}"`);
  return { record, run };
}
