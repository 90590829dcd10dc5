import { num, toRunRecord } from '../rows.js';
import type { Row, SqlParam, SqlTx } from '../sql/driver.js';
import { FINISHED_STATUSES, type NewRun, type PruneResult, type RunQuery, type RunRecord, type StoredRunStatus } from '../types.js';
import { placeholders, rowLock, type SqlContext } from './context.js';

// Runs and their leases: creating, listing, claiming, renewing, pruning.

/**
 * A run's row with its options (table run_options, v9), for reads: the options live apart from the
 * row that claims, fences and lease renewals rewrite. `r` is the run's row.
 */
export const RUN_WITH_OPTIONS = 'runs r JOIN run_options o ON o.run_id = r.id';
/** The columns `toRunRecord` reads, from RUN_WITH_OPTIONS. */
export const RUN_COLUMNS = 'r.*, o.options';

/**
 * Records of run rows that a write returned (`RETURNING *` carries no options), their options read
 * in the same transaction.
 */
export async function withOptions(tx: SqlTx, rows: readonly Row[]): Promise<RunRecord[]> {
  if (rows.length === 0) return [];
  const found = await tx.query<{ run_id: string; options: string }>(
    `SELECT run_id, options FROM run_options WHERE run_id IN (${placeholders(rows.length)})`,
    rows.map((r) => String(r.id)),
  );
  const options = new Map(found.map((o) => [String(o.run_id), o.options]));
  return rows.map((row) => toRunRecord({ ...row, options: options.get(String(row.id)) }));
}

export async function createRun(ctx: SqlContext, run: NewRun, owner: { id: string; leaseMs: number } | null): Promise<RunRecord> {
  const now = Date.now();
  // Without an owner the run is queued: running, unowned, so the next recover() or server picks it up.
  const options = JSON.stringify(run.options);
  const rows = await ctx.driver.transaction(async (tx) => {
    const inserted = await tx.query(
      `INSERT INTO runs (id, status, user_id, session_id, channel, task, owner, lease_expires_at, created_at, updated_at, epoch)
       VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, 1) RETURNING *`,
      [run.id, run.userId, run.sessionId, run.channel, run.task, owner?.id ?? null, owner ? now + owner.leaseMs : null, now, now],
    );
    await tx.execute('INSERT INTO run_options (run_id, options) VALUES (?, ?)', [run.id, options]);
    await ctx.transport.inTx(tx, { type: 'run', runId: run.id, status: 'running', owner: owner?.id ?? null });
    return inserted;
  });
  return toRunRecord({ ...rows[0]!, options });
}

export async function getRun(ctx: SqlContext, runId: string): Promise<RunRecord | undefined> {
  const rows = await ctx.driver.query(`SELECT ${RUN_COLUMNS} FROM ${RUN_WITH_OPTIONS} WHERE r.id = ?`, [runId]);
  return rows[0] ? toRunRecord(rows[0]) : undefined;
}

export async function listRuns(ctx: SqlContext, query: RunQuery = {}): Promise<RunRecord[]> {
  const { where, params } = runFilter(query);
  params.push(query.limit ?? 100);
  const rows = await ctx.driver.query(
    `SELECT ${RUN_COLUMNS} FROM ${RUN_WITH_OPTIONS} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`,
    params,
  );
  return rows.map(toRunRecord);
}

/**
 * Store.countRuns: how many runs match, counted up to `limit` (no row is built, no options read):
 * a server checks a user's runs in flight against its limit on every run it starts.
 */
export async function countRuns(ctx: SqlContext, query: RunQuery & { limit: number }): Promise<number> {
  const { where, params } = runFilter(query);
  params.push(query.limit);
  const rows = await ctx.driver.query<{ n: unknown }>(`SELECT count(*) AS n FROM (SELECT 1 FROM runs r ${where.length ? `WHERE ${where.join(' AND ')}` : ''} LIMIT ?) t`, params);
  return num(rows[0]?.n ?? 0);
}

function runFilter(query: RunQuery): { where: string[]; params: SqlParam[] } {
  const where: string[] = [];
  const params: SqlParam[] = [];
  if (query.status?.length) {
    where.push(`r.status IN (${placeholders(query.status.length)})`);
    params.push(...query.status);
  }
  if (query.userId) {
    where.push('r.user_id = ?');
    params.push(query.userId);
  }
  if (query.sessionId) {
    where.push('r.session_id = ?');
    params.push(query.sessionId);
  }
  return { where, params };
}

export async function claimRun(ctx: SqlContext, runId: string, owner: string, leaseMs: number, from: readonly StoredRunStatus[]): Promise<RunRecord | undefined> {
  if (from.length === 0) return undefined;
  const now = Date.now();
  return ctx.driver.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE runs SET status = 'running', owner = ?, lease_expires_at = ?, updated_at = ?, pending_interaction_id = NULL, epoch = epoch + 1
       WHERE id = ? AND status IN (${placeholders(from.length)}) AND (owner IS NULL OR owner = ? OR lease_expires_at < ?)
       RETURNING *`,
      [owner, now + leaseMs, now, runId, ...from, owner, now],
    );
    if (!rows[0]) return undefined;
    await ctx.transport.inTx(tx, { type: 'run', runId, status: 'running', owner });
    return (await withOptions(tx, rows))[0];
  });
}

export async function claimOrphans(
  ctx: SqlContext,
  owner: string,
  leaseMs: number,
  limit: number,
  options: { exclude?: readonly string[] } = {},
): Promise<RunRecord[]> {
  const now = Date.now();
  // Postgres: SKIP LOCKED lets several instances sweep at once without waiting on, or taking, the same rows.
  const lock = rowLock(ctx, 'FOR UPDATE SKIP LOCKED');
  // Runs the caller drives already (its own lease ran out under load): claiming them again would fence its live loop out.
  const exclude = options.exclude?.length ? `AND id NOT IN (${placeholders(options.exclude.length)})` : '';
  // An idle run held by a dead instance is an orphan too (it waited in that memory); a released idle
  // run (no owner) waits for a person in the store, like a suspended one, and is nobody's orphan.
  return ctx.driver.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE runs SET owner = ?, lease_expires_at = ?, updated_at = ?, epoch = epoch + 1
       WHERE id IN (SELECT id FROM runs WHERE status IN ('running', 'idle') AND (owner IS NULL OR lease_expires_at < ?) AND (status = 'running' OR owner IS NOT NULL) ${exclude} ORDER BY updated_at LIMIT ? ${lock})
       RETURNING *`,
      [owner, now + leaseMs, now, now, ...(options.exclude ?? []), limit],
    );
    for (const row of rows) await ctx.transport.inTx(tx, { type: 'run', runId: String(row.id), status: 'running', owner });
    return withOptions(tx, rows);
  });
}

export async function renewLeases(ctx: SqlContext, owner: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
  const kept: string[] = [];
  const until = Date.now() + leaseMs;
  // Rows are locked in id order (Postgres): two renewals, or a renewal and a claim sweep, never
  // lock the same runs in opposite orders (a deadlock aborts one of them).
  const ids = [...new Set(runIds)].sort();
  const lock = rowLock(ctx, 'ORDER BY id FOR UPDATE');
  for (let start = 0; start < ids.length; start += 500) {
    const chunk = ids.slice(start, start + 500);
    const rows = await ctx.driver.query<{ id: string }>(
      `UPDATE runs SET lease_expires_at = ?
       WHERE id IN (SELECT id FROM runs WHERE owner = ? AND status IN ('running', 'idle') AND id IN (${placeholders(chunk.length)}) ${lock}) RETURNING id`,
      [until, owner, ...chunk],
    );
    kept.push(...rows.map((r) => String(r.id)));
  }
  return kept;
}

/** Retention: deletes finished runs last updated before `olderThan`, with everything they wrote. */
export async function prune(ctx: SqlContext, options: { olderThan: Date }): Promise<PruneResult> {
  return ctx.driver.transaction(async (tx) => {
    const finished = FINISHED_STATUSES;
    const select = `SELECT id FROM runs WHERE status IN (${placeholders(finished.length)}) AND updated_at < ?`;
    const params: SqlParam[] = [...finished, options.olderThan.getTime()];
    // A row of run_events is a write's batch of events (v6): the count is of events, as before.
    const counted = await tx.query<{ n: unknown }>(
      `SELECT coalesce(sum(${ctx.driver.dialect === 'sqlite' ? 'json_array_length(events)' : 'json_array_length(events::json)'}), 0) AS n FROM run_events WHERE run_id IN (${select})`,
      params,
    );
    await tx.execute(`DELETE FROM run_events WHERE run_id IN (${select})`, params);
    const events = Number(counted[0]?.n ?? 0);
    for (const table of ['run_checkpoints', 'run_messages', 'run_tool_history', 'tool_calls', 'interactions', 'run_options']) {
      await tx.execute(`DELETE FROM ${table} WHERE run_id IN (${select})`, params);
    }
    const runs = await tx.execute(`DELETE FROM runs WHERE id IN (${select})`, params);
    return { runs, events };
  });
}
