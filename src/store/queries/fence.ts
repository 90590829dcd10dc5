import { InteractionNotFoundError } from '../../interaction/index.js';
import { LeaseLostError, RunNotFoundError } from '../errors.js';
import { num } from '../rows.js';
import type { SqlParam, SqlTx } from '../sql/driver.js';
import { FINISHED_STATUSES, type RunFence, type RunWrite } from '../types.js';
import type { SqlContext } from './context.js';

/**
 * Checks ownership — the owner and, when given, its claim (epoch) — and applies the run patch in
 * one statement (which also row-locks the run, so a concurrent claim waits for this write or
 * this write sees the claim). Every fenced write (a step, an ask, a fenced answer) starts here.
 */
export async function fence(ctx: SqlContext, tx: SqlTx, runId: string, { owner, epoch }: RunFence, patch: RunWrite['run']): Promise<void> {
  const now = Date.now();
  const sets = ['updated_at = ?'];
  const params: SqlParam[] = [now];
  if (patch?.status !== undefined) {
    sets.push('status = ?');
    params.push(patch.status);
    if (FINISHED_STATUSES.includes(patch.status)) {
      sets.push('finished_at = ?');
      params.push(now);
    }
  }
  if (patch?.pendingInteractionId !== undefined) {
    sets.push('pending_interaction_id = ?');
    params.push(patch.pendingInteractionId);
  }
  if (patch?.finalText !== undefined) {
    sets.push('final_text = ?');
    params.push(patch.finalText);
  }
  if (patch?.error !== undefined) {
    sets.push('error = ?');
    params.push(patch.error === null ? null : JSON.stringify(patch.error));
  }
  if (patch?.release) sets.push('owner = NULL', 'lease_expires_at = NULL');
  const byClaim = epoch === undefined ? '' : ' AND epoch = ?';
  const changed = await tx.execute(`UPDATE runs SET ${sets.join(', ')} WHERE id = ? AND owner = ?${byClaim}`, [
    ...params,
    runId,
    owner,
    ...(epoch === undefined ? [] : [epoch]),
  ]);
  if (changed === 0) {
    const rows = await tx.query<{ owner: string | null; epoch: unknown }>('SELECT owner, epoch FROM runs WHERE id = ?', [runId]);
    if (!rows[0]) throw new RunNotFoundError(runId);
    throw new LeaseLostError(runId, owner, rows[0].owner, epoch === undefined ? undefined : { epoch, currentEpoch: num(rows[0].epoch) });
  }
  if (patch?.status !== undefined) await ctx.transport.inTx(tx, { type: 'run', runId, status: patch.status, owner: patch.release ? null : owner });
  if (patch?.closeInteractions !== undefined) await cancelPendingInteractions(ctx, tx, runId, patch.closeInteractions);
}

/** Fences a write to an interaction by its run's current claim. */
export async function fenceInteraction(ctx: SqlContext, tx: SqlTx, interactionId: string, runFence: RunFence): Promise<void> {
  const rows = await tx.query<{ run_id: string }>('SELECT run_id FROM interactions WHERE id = ?', [interactionId]);
  if (!rows[0]) throw new InteractionNotFoundError(interactionId);
  await fence(ctx, tx, String(rows[0].run_id), runFence, undefined);
}

/** Cancels a run's pending requests in `tx` (a run patch's `closeInteractions`, or a run cancel). */
export async function cancelPendingInteractions(ctx: SqlContext, tx: SqlTx, runId: string, reason: string): Promise<string[]> {
  const rows = await tx.query<{ id: string }>(
    `UPDATE interactions SET status = 'cancelled', reason = ?, closed_at = ? WHERE run_id = ? AND status = 'pending' RETURNING id`,
    [reason, Date.now(), runId],
  );
  for (const row of rows) await ctx.transport.inTx(tx, { type: 'interaction', runId, interactionId: String(row.id), status: 'cancelled' });
  return rows.map((r) => String(r.id));
}
