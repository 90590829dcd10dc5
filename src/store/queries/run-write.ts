import type { RunWrite } from '../types.js';
import { insertAsks } from './asks.js';
import type { SqlContext } from './context.js';
import { fence } from './fence.js';
import { claimWithAnswer } from './interactions.js';
import { applyWrite } from './writes.js';

/**
 * One step's write, in one fenced transaction: nothing of it lands when the writer's claim is stale.
 * With `claim`, the run is claimed and the answer that resumed it recorded first, in the same
 * transaction: when either compare-and-set fails, nothing lands.
 */
export async function write(ctx: SqlContext, runWrite: RunWrite): Promise<void> {
  await ctx.driver.transaction(async (tx) => {
    if (runWrite.claim) await claimWithAnswer(ctx, tx, runWrite.runId, runWrite.owner, runWrite.claim);
    await fence(ctx, tx, runWrite.runId, { owner: runWrite.owner, epoch: runWrite.epoch }, runWrite.run);
    await applyWrite(ctx, tx, runWrite);
    if (runWrite.asks?.length) await insertAsks(ctx, tx, runWrite.asks, runWrite.owner, runWrite.run?.pendingInteractionId === undefined);
  });
}
