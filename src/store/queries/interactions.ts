import type { RunEvent } from '../../events/index.js';
import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  InteractionNotFoundError,
  type InteractionRequest,
  type InteractionResponse,
  type PriorOutcome,
} from '../../interaction/index.js';
import { num, toInteraction } from '../rows.js';
import type { Row, SqlParam, SqlTx } from '../sql/driver.js';
import type { ClaimAnswerOptions, InteractionQuery, InteractionRecord, RunFence, RunRecord, RunWrite, StepWrite, StoredRunStatus } from '../types.js';
import { LeaseLostError, RunNotFoundError } from '../errors.js';
import { placeholders, rowLock, type SqlContext } from './context.js';
import { cancelPendingInteractions, fence, fenceInteraction } from './fence.js';
import { insertAsks, insertRequest, markRunWaiting, markWaiting } from './asks.js';
import { appendEvents, applyWrite } from './writes.js';
import { withOptions } from './runs.js';

// Interactions: asking (saveInteraction), answering (claimAnswer, the compare-and-set), closing, expiring.

export async function saveInteraction(
  ctx: SqlContext,
  request: InteractionRequest,
  runFence?: RunFence & { events: readonly RunEvent[]; step?: StepWrite },
): Promise<(PriorOutcome & { announce?: boolean }) | undefined> {
  return ctx.driver.transaction(async (tx) => {
    // The run says what it waits for in the same transaction that commits the request: a reader
    // never sees a pending request the run does not name (nor a next-message ask on a `running` run).
    // Locks: the run row first (the fence), then the request — the order of every write here.
    if (runFence) {
      await fence(ctx, tx, request.runId, runFence, undefined);
      if (runFence.events.length) await appendEvents(ctx, tx, request.runId, runFence.events);
      // The step that led to the ask, committed with it: one transaction instead of two.
      if (runFence.step) await applyWrite(ctx, tx, { runId: request.runId, owner: runFence.owner, ...runFence.step });
      if (runFence.step?.asks?.length) await insertAsks(ctx, tx, runFence.step.asks, runFence.owner, false);
    }
    const rows = await tx.query(`SELECT * FROM interactions WHERE id = ? ${rowLock(ctx, 'FOR UPDATE')}`, [request.id]);
    const now = Date.now();
    let record = rows[0] ? toInteraction(rows[0]) : undefined;
    if (record?.status === 'pending' && record.expiresAt && Date.parse(record.expiresAt) <= now) {
      record = await expireOne(ctx, tx, record, now);
    }
    if (runFence && (!record || record.status === 'pending')) await markRunWaiting(ctx, tx, record?.request ?? request, runFence.owner);
    if (!record) {
      await insertRequest(ctx, tx, request, now);
      return undefined;
    }
    if (record.status === 'pending') {
      await markWaiting(tx, record.request);
      return { status: 'pending', request: record.request };
    }
    // The outcome reaches running code now: from here on, re-running the tool would repeat what follows the ask.
    const announce = !record.consumed;
    if (announce) {
      await tx.execute('UPDATE interactions SET consumed = 1 WHERE id = ?', [record.id]);
      await markPassedAsk(tx, record.request.runId, record.request.toolCallId);
    }
    if (record.status === 'answered') return { status: 'answered', request: record.request, response: record.response!, announce };
    return { status: record.status, request: record.request, reason: record.reason ?? record.status, announce };
  });
}

/** Postgres: takes the run row of a request before the request's (the lock order of fenced writes). */
async function lockRunOf(ctx: SqlContext, tx: SqlTx, interactionId: string): Promise<void> {
  if (ctx.driver.dialect !== 'postgres') return;
  await tx.query('SELECT id FROM runs WHERE id = (SELECT run_id FROM interactions WHERE id = ?) FOR UPDATE', [interactionId]);
}

/**
 * The request a driven run waited for was answered or closed: the run now waits for its next pending
 * request (parallel tool calls may ask at once), or for nothing, and an idle run is working again.
 * A released run (no owner) keeps its `pendingInteractionId` and status until it is resumed: the
 * sweep finds runs whose request was settled by it.
 */
async function settleRunWait(ctx: SqlContext, tx: SqlTx, runId: string, interactionId: string): Promise<void> {
  const rows = await tx.query<{ status: string; owner: string | null }>(
    `UPDATE runs SET pending_interaction_id = (SELECT i.id FROM interactions i WHERE i.run_id = runs.id AND i.status = 'pending' ORDER BY i.created_at DESC, i.id DESC LIMIT 1),
       status = CASE WHEN status = 'idle' THEN 'running' ELSE status END, updated_at = ?
     WHERE id = ? AND pending_interaction_id = ? AND owner IS NOT NULL AND status IN ('running', 'idle') RETURNING status, owner`,
    [Date.now(), runId, interactionId],
  );
  if (rows[0]) await ctx.transport.inTx(tx, { type: 'run', runId, status: rows[0].status as StoredRunStatus, owner: rows[0].owner });
}

async function markPassedAsk(tx: SqlTx, runId: string, toolCallId: string | null | undefined): Promise<void> {
  if (!toolCallId) return;
  await tx.execute(`UPDATE tool_calls SET waiting = 0, passed_ask = 1 WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`, [runId, toolCallId]);
}

export async function claimAnswer(
  ctx: SqlContext,
  interactionId: string,
  response: InteractionResponse,
  options: ClaimAnswerOptions = {},
): Promise<InteractionRecord & { claimedRun?: RunRecord }> {
  const outcome = await ctx.driver.transaction(async (tx) => {
    if (options.fence) await fenceInteraction(ctx, tx, interactionId, options.fence);
    else await lockRunOf(ctx, tx, interactionId);
    const now = Date.now();
    const answered = await answerPending(ctx, tx, interactionId, response, options.consumed === true, now);
    if ('refused' in answered) return answered;
    if (!options.claimRun) return answered;
    const claimedRun = await claimReleasedRun(ctx, tx, answered.runId, options.claimRun, now);
    return claimedRun ? { ...answered, claimedRun } : answered;
  });
  if ('refused' in outcome && outcome.refused) refuse(outcome.refused);
  return outcome as InteractionRecord & { claimedRun?: RunRecord };
}

/**
 * The compare-and-set of an answer, in `tx`: of concurrent answers, exactly one finds the row
 * still pending. Otherwise the record that refuses it (an overdue request is expired first, and
 * that is committed unless the caller throws).
 */
async function answerPending(
  ctx: SqlContext,
  tx: SqlTx,
  interactionId: string,
  response: InteractionResponse,
  consumed: boolean,
  now: number,
): Promise<InteractionRecord | { refused: InteractionRecord }> {
  const rows = await tx.query(`${ANSWER_PENDING} RETURNING *`, answerParams(interactionId, response, consumed, now));
  if (!rows[0]) return { refused: await refusal(ctx, tx, interactionId, now) };
  const record = toInteraction(rows[0]);
  await answered(ctx, tx, record.runId, record.toolCallId, interactionId, consumed);
  return record;
}

/**
 * The compare-and-set of an answer in a run's write (its claim, or answers its loop took), which
 * needs only whether it won: the row's run and call are returned, not the record (no request and
 * response to parse). Throws the refusal's typed error.
 */
async function answerInWrite(ctx: SqlContext, tx: SqlTx, interactionId: string, response: InteractionResponse, now: number, claimedRunId?: string): Promise<void> {
  const rows = await tx.query<{ run_id: unknown; tool_call_id: unknown }>(`${ANSWER_PENDING} RETURNING run_id, tool_call_id`, answerParams(interactionId, response, true, now));
  if (!rows[0]) refuse(await refusal(ctx, tx, interactionId, now));
  const runId = String(rows[0].run_id);
  const toolCallId = rows[0].tool_call_id === null || rows[0].tool_call_id === undefined ? null : String(rows[0].tool_call_id);
  await answered(ctx, tx, runId, toolCallId, interactionId, true, claimedRunId);
}

const ANSWER_PENDING = `UPDATE interactions SET status = 'answered', response = ?, answered_by = ?, answered_at = ?, closed_at = ?, consumed = ?
     WHERE id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?)`;

function answerParams(interactionId: string, response: InteractionResponse, consumed: boolean, now: number): SqlParam[] {
  return [JSON.stringify(response), response.userId ?? null, response.respondedAt, now, consumed ? 1 : 0, interactionId, now];
}

/** What follows a won compare-and-set, in `tx`: the call past its ask, the notification, the run's wait. */
async function answered(ctx: SqlContext, tx: SqlTx, runId: string, toolCallId: string | null, interactionId: string, consumed: boolean, claimedRunId?: string): Promise<void> {
  if (consumed && toolCallId) await markPassedAsk(tx, runId, toolCallId);
  await ctx.transport.inTx(tx, { type: 'interaction', runId, interactionId, status: 'answered' });
  // A run claimed in this transaction had its pending_interaction_id cleared by the claim, so
  // settleRunWait's `pending_interaction_id = ?` cannot match it: one statement fewer per resume.
  if (runId !== claimedRunId) await settleRunWait(ctx, tx, runId, interactionId);
}

/** The record that refuses an answer; an overdue request is expired first (committed unless the caller throws). */
async function refusal(ctx: SqlContext, tx: SqlTx, interactionId: string, now: number): Promise<InteractionRecord> {
  const existing = await tx.query('SELECT * FROM interactions WHERE id = ?', [interactionId]);
  if (!existing[0]) throw new InteractionNotFoundError(interactionId);
  const record = toInteraction(existing[0]);
  return record.status === 'pending' ? expireOne(ctx, tx, record, now) : record;
}

/** RunWrite.answers, in `tx` after the write's fence: each compare-and-set must win, or the write is refused. */
export async function recordAnswers(ctx: SqlContext, tx: SqlTx, answers: NonNullable<RunWrite['answers']>): Promise<void> {
  const now = Date.now();
  for (const { interactionId, response } of answers) await answerInWrite(ctx, tx, interactionId, response, now);
}

/**
 * RunWrite.claim, in `tx` before the write's fence: the released run claimed for `owner` at exactly
 * `claim.epoch`, then the answer that resumed it recorded, consumed. Throws (the transaction rolls
 * back) when the run was claimed meanwhile or the request is no longer pending.
 */
export async function claimWithAnswer(ctx: SqlContext, tx: SqlTx, runId: string, owner: string, claim: NonNullable<RunWrite['claim']>): Promise<void> {
  const now = Date.now();
  // The row alone: the writer has the run built already, so its options are not read.
  const claimed = await claimReleasedRow(ctx, tx, runId, { owner, leaseMs: claim.leaseMs, epoch: claim.epoch }, now);
  if (!claimed) {
    const rows = await tx.query<{ owner: string | null; epoch: unknown }>('SELECT owner, epoch FROM runs WHERE id = ?', [runId]);
    if (!rows[0]) throw new RunNotFoundError(runId);
    throw new LeaseLostError(runId, owner, rows[0].owner, { epoch: claim.epoch + 1, currentEpoch: num(rows[0].epoch) });
  }
  await answerInWrite(ctx, tx, claim.answer.interactionId, claim.answer.response, now, runId);
}

/**
 * Claims a run nobody drives (released: suspended or idle, no owner) for `claim.owner`, in `tx`;
 * with `claim.epoch`, only if it is still at that claim (nobody drove it since it was read).
 */
async function claimReleasedRun(ctx: SqlContext, tx: SqlTx, runId: string, claim: { owner: string; leaseMs: number; epoch?: number }, now: number): Promise<RunRecord | undefined> {
  const row = await claimReleasedRow(ctx, tx, runId, claim, now);
  return row ? (await withOptions(tx, [row]))[0] : undefined;
}

/** claimReleasedRun's claim: the run's row as the claim left it, without its options. */
async function claimReleasedRow(ctx: SqlContext, tx: SqlTx, runId: string, claim: { owner: string; leaseMs: number; epoch?: number }, now: number): Promise<Row | undefined> {
  const atEpoch = claim.epoch === undefined ? '' : ' AND epoch = ?';
  const rows = await tx.query(
    `UPDATE runs SET status = 'running', owner = ?, lease_expires_at = ?, updated_at = ?, pending_interaction_id = NULL, epoch = epoch + 1
     WHERE id = ? AND status IN ('suspended', 'idle') AND owner IS NULL${atEpoch} RETURNING *`,
    [claim.owner, now + claim.leaseMs, now, runId, ...(claim.epoch === undefined ? [] : [claim.epoch])],
  );
  if (!rows[0]) return undefined;
  await ctx.transport.inTx(tx, { type: 'run', runId, status: 'running', owner: claim.owner });
  return rows[0];
}

async function expireOne(ctx: SqlContext, tx: SqlTx, record: InteractionRecord, now: number): Promise<InteractionRecord> {
  // Measured from when the request was asked (a resumed ask keeps its first deadline).
  const seconds = record.expiresAt ? Math.max(0, Math.round((Date.parse(record.expiresAt) - Date.parse(record.request.createdAt)) / 100) / 10) : 0;
  const reason = `no one answered within ${seconds} s`;
  await tx.execute(`UPDATE interactions SET status = 'expired', reason = ?, closed_at = ? WHERE id = ? AND status = 'pending'`, [reason, now, record.id]);
  await ctx.transport.inTx(tx, { type: 'interaction', runId: record.runId, interactionId: record.id, status: 'expired' });
  await settleRunWait(ctx, tx, record.runId, record.id);
  return { ...record, status: 'expired', reason, closedAt: new Date(now).toISOString() };
}

export async function closeInteraction(
  ctx: SqlContext,
  interactionId: string,
  status: 'expired' | 'cancelled',
  reason: string,
  runFence?: RunFence,
): Promise<boolean> {
  return ctx.driver.transaction(async (tx) => {
    if (runFence) await fenceInteraction(ctx, tx, interactionId, runFence);
    else await lockRunOf(ctx, tx, interactionId);
    const rows = await tx.query<{ run_id: string }>(`UPDATE interactions SET status = ?, reason = ?, closed_at = ? WHERE id = ? AND status = 'pending' RETURNING run_id`, [
      status,
      reason,
      Date.now(),
      interactionId,
    ]);
    if (!rows[0]) return false;
    await ctx.transport.inTx(tx, { type: 'interaction', runId: String(rows[0].run_id), interactionId, status });
    await settleRunWait(ctx, tx, String(rows[0].run_id), interactionId);
    return true;
  });
}

export async function closeRunInteractions(ctx: SqlContext, runId: string, reason: string): Promise<string[]> {
  return ctx.driver.transaction((tx) => cancelPendingInteractions(ctx, tx, runId, reason));
}

export async function expireDue(ctx: SqlContext, now = new Date()): Promise<InteractionRecord[]> {
  const due = await ctx.driver.query(`SELECT * FROM interactions WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT 1000`, [
    now.getTime(),
  ]);
  if (due.length === 0) return [];
  return ctx.driver.transaction(async (tx) => {
    const expired: InteractionRecord[] = [];
    for (const row of due) {
      const record = toInteraction(row);
      await lockRunOf(ctx, tx, record.id);
      const changed = await tx.query(`SELECT status FROM interactions WHERE id = ? AND status = 'pending'`, [record.id]);
      if (changed.length === 0) continue; // answered or closed meanwhile
      expired.push(await expireOne(ctx, tx, record, now.getTime()));
    }
    return expired;
  });
}

export async function getInteraction(ctx: SqlContext, interactionId: string): Promise<InteractionRecord | undefined> {
  const rows = await ctx.driver.query('SELECT * FROM interactions WHERE id = ?', [interactionId]);
  return rows[0] ? toInteraction(rows[0]) : undefined;
}

export async function listInteractions(ctx: SqlContext, query: InteractionQuery = {}): Promise<InteractionRecord[]> {
  if (query.ids) {
    if (query.ids.length === 0) return [];
    // Many ids (a runner with thousands of waiting runs): a primary-key lookup per chunk.
    if (query.ids.length > 500) {
      const out: InteractionRecord[] = [];
      for (let start = 0; start < query.ids.length; start += 500) out.push(...(await listInteractions(ctx, { ...query, ids: query.ids.slice(start, start + 500) })));
      return out.slice(0, query.limit ?? out.length);
    }
  }
  const { from, params } = interactionFilter(ctx, query);
  params.push(query.limit ?? (query.ids ? query.ids.length : 100));
  const rows = await ctx.driver.query(`SELECT i.* ${from} ORDER BY i.created_at DESC, i.id DESC LIMIT ?`, params);
  return rows.map(toInteraction);
}

/**
 * Store.countInteractions: how many requests match (by run, status, the runs' user), counted up to
 * `limit`, with no record built: a server checks a user's waiting requests against its limit on
 * every run it starts.
 */
export async function countInteractions(ctx: SqlContext, query: Pick<InteractionQuery, 'runId' | 'status' | 'userId'> & { limit: number }): Promise<number> {
  const { from, params } = interactionFilter(ctx, query);
  params.push(query.limit);
  const rows = await ctx.driver.query<{ n: unknown }>(`SELECT count(*) AS n FROM (SELECT 1 ${from} LIMIT ?) t`, params);
  return num(rows[0]?.n ?? 0);
}

/** The FROM and WHERE of listInteractions and countInteractions, with their parameters. */
function interactionFilter(ctx: SqlContext, query: InteractionQuery): { from: string; params: SqlParam[] } {
  const where: string[] = [];
  const params: SqlParam[] = [];
  if (query.ids) {
    where.push(`i.id IN (${placeholders(query.ids.length)})`);
    params.push(...query.ids);
  }
  if (query.runId) {
    where.push('i.run_id = ?');
    params.push(query.runId);
  }
  if (query.status?.length) {
    // With ids, SQLite's planner took the status index for `status IN (…)` and walked every settled
    // request ever kept (a runner's poll of its 1,000 waiting runs read them all) instead of
    // looking the ids up by primary key; a unary `+` keeps the status term off any index
    // (SQLite's documented way). Postgres weighs the two by its statistics and has no text `+`.
    const column = query.ids && ctx.driver.dialect === 'sqlite' ? '+i.status' : 'i.status';
    where.push(`${column} IN (${placeholders(query.status.length)})`);
    params.push(...query.status);
  }
  if (query.remembersForRun) {
    // The response is stored as JSON.stringify wrote it (answerPending): no space around the colon.
    where.push('i.response LIKE ?');
    params.push('%"remember":"session"%');
  }
  if (query.userId) {
    where.push('r.user_id = ?');
    params.push(query.userId);
  }
  const from = `FROM interactions i ${query.userId ? 'JOIN runs r ON r.id = i.run_id' : ''} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
  return { from, params };
}

/** Why an answer was refused, as the typed error a caller switches on. */
function refuse(record: InteractionRecord): never {
  switch (record.status) {
    case 'answered':
      throw new InteractionAlreadyAnsweredError(record.id, record.answeredBy ?? undefined, record.answeredAt ?? undefined);
    case 'expired':
      throw new InteractionExpiredError(record.id, record.expiresAt ?? undefined);
    case 'cancelled':
      throw new InteractionCancelledError(record.id, record.reason ?? 'cancelled');
    default:
      throw new InteractionNotFoundError(record.id);
  }
}
