import type { RunWrite } from '../types.js';
import { insertAsks } from './asks.js';
import { rowLock, type SqlContext } from './context.js';
import { fence } from './fence.js';
import { claimWithAnswer, recordAnswers } from './interactions.js';
import { applyWrite } from './writes.js';

/**
 * One step's write, in one fenced transaction: nothing of it lands when the writer's claim is stale.
 * With `claim`, the run is claimed and the answer that resumed it recorded first, in the same
 * transaction; `answers` are recorded after the fence: when any compare-and-set fails, nothing lands.
 */
export async function write(ctx: SqlContext, runWrite: RunWrite): Promise<void> {
  await ctx.driver.transaction(async (tx) => {
    if (runWrite.claim) await claimWithAnswer(ctx, tx, runWrite.runId, runWrite.owner, runWrite.claim);
    if (runWrite.answers?.length) {
      // Before the run's patch (a final status closes the run's pending requests, these among them);
      // the run row is locked first, the order of every write (Postgres; a SQLite transaction holds
      // the whole database from BEGIN IMMEDIATE, so there is nothing to take).
      if (ctx.driver.dialect === 'postgres') await tx.query(`SELECT id FROM runs WHERE id = ? ${rowLock(ctx, 'FOR UPDATE')}`, [runWrite.runId]);
      await recordAnswers(ctx, tx, runWrite.answers);
    }
    // The claim above set the owner and the epoch this write is fenced by, in this transaction: with
    // no run patch, the fence's own UPDATE would only check what the claim just wrote.
    const claimedHere = runWrite.claim !== undefined && runWrite.epoch === runWrite.claim.epoch + 1 && runWrite.run === undefined;
    if (!claimedHere) await fence(ctx, tx, runWrite.runId, { owner: runWrite.owner, epoch: runWrite.epoch }, runWrite.run);
    await applyWrite(ctx, tx, runWrite);
    if (runWrite.asks?.length) await insertAsks(ctx, tx, runWrite.asks, runWrite.owner, runWrite.run?.pendingInteractionId === undefined);
  });
}
