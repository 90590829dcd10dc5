import type { InteractionRequest } from '../../interaction/index.js';
import { isNextMessageRequest } from '../run-status.js';
import type { SqlTx } from '../sql/driver.js';
import type { SqlContext } from './context.js';

// Requests entering the store: the insert, and what the run and its call say while they wait.

const INSERT_REQUEST = `INSERT INTO interactions (id, run_id, tool_call_id, kind, status, request, expires_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`;

/**
 * A new pending request: its row, its call marked waiting, subscribers told. `ifAbsent`: a request
 * already stored is left as it is (nothing else done), in the insert's own statement; false when not inserted.
 */
export async function insertRequest(ctx: SqlContext, tx: SqlTx, request: InteractionRequest, now = Date.now(), ifAbsent = false): Promise<boolean> {
  const inserted = await tx.execute(ifAbsent ? `${INSERT_REQUEST} ON CONFLICT (id) DO NOTHING` : INSERT_REQUEST, [
    request.id,
    request.runId,
    request.toolCallId ?? null,
    request.kind,
    JSON.stringify(request),
    request.expiresAt ? Date.parse(request.expiresAt) : null,
    now,
  ]);
  if (inserted === 0) return false;
  await markWaiting(tx, request);
  await ctx.transport.inTx(tx, { type: 'interaction', runId: request.runId, interactionId: request.id, status: 'pending', ...(isNextMessageRequest(request) ? { nextMessage: true } : {}) });
  return true;
}

/**
 * Requests committed with a run's write (RunWrite.asks): each inserted unless already stored (a
 * resumed run asking again). `namePending`: the run names the last as what it waits for (the write
 * carries no status of its own); otherwise the write's run patch says it.
 */
export async function insertAsks(ctx: SqlContext, tx: SqlTx, asks: readonly InteractionRequest[], owner: string, namePending: boolean): Promise<void> {
  const now = Date.now();
  // One statement per request: the insert skips one already stored (no look first).
  for (const request of asks) await insertRequest(ctx, tx, request, now, true);
  if (namePending) await markRunWaiting(ctx, tx, asks[asks.length - 1]!, owner);
}

/** The run (fenced by the caller) waits for `request`: it names it, and a next-message ask makes it idle. */
export async function markRunWaiting(ctx: SqlContext, tx: SqlTx, request: InteractionRequest, owner: string): Promise<void> {
  await tx.execute('UPDATE runs SET pending_interaction_id = ? WHERE id = ?', [request.id, request.runId]);
  if (!isNextMessageRequest(request)) return;
  // Subscribers hear of a change of status only (a resumed loop asking again changes nothing).
  const changed = await tx.query(`UPDATE runs SET status = 'idle' WHERE id = ? AND status <> 'idle' RETURNING id`, [request.runId]);
  if (changed[0]) await ctx.transport.inTx(tx, { type: 'run', runId: request.runId, status: 'idle', owner });
}

export async function markWaiting(tx: SqlTx, request: InteractionRequest): Promise<void> {
  if (!request.toolCallId) return;
  await tx.execute(`UPDATE tool_calls SET waiting = 1 WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`, [request.runId, request.toolCallId]);
}
