import { toRunRecord } from '../rows.js';
import type { RunRecord } from '../types.js';
import type { SqlContext } from './context.js';
import { RUN_COLUMNS, RUN_WITH_OPTIONS } from './runs.js';

// What a runner's maintenance pass looks for on every tick (every leaseMs / 3 on a server): answered
// released runs to resume and orphans to take over. Both are nearly always empty, so both are
// answered from the index runs_status_lease (status, lease_expires_at, owner, …) without reading the runs that do not match:
// a server holding 1,000 runs waiting in memory used to read all 1,000 rows (and parse their
// options) on every tick to find none (44 ms on the event loop, bench/server.ts).

/**
 * Released runs (suspended, or idle with no owner) whose awaited request is no longer pending (or
 * which await none), oldest change first. `lease_expires_at IS NULL` is the same as `owner IS NULL`
 * (every write sets or clears both together); it is spelled out so the index skips owned runs.
 */
export async function listWakeableRuns(ctx: SqlContext, limit: number): Promise<RunRecord[]> {
  const rows = await ctx.driver.query(WAKEABLE_RUNS_SQL, [limit]);
  return rows.map(toRunRecord);
}

/** listWakeableRuns' query: the filter is read from the index runs_status_lease (v8's runs_released, folded into it by v10), not from every idle row. */
export const WAKEABLE_RUNS_SQL = `SELECT ${RUN_COLUMNS} FROM ${RUN_WITH_OPTIONS}
     WHERE r.status IN ('suspended', 'idle') AND r.lease_expires_at IS NULL AND r.owner IS NULL
       AND NOT EXISTS (SELECT 1 FROM interactions i WHERE i.id = r.pending_interaction_id AND i.status = 'pending')
     ORDER BY r.updated_at, r.id LIMIT ?`;

/**
 * Ids of runs `claimOrphans` would claim now (a running run with no owner, or a running or owned
 * idle run whose lease ran out), up to `limit`: a read, so a pass that finds none writes nothing
 * (no write transaction, no commit) and sends no exclusion list. Two index ranges instead of the
 * claim's `OR`, which no index serves.
 */
export async function listOrphanCandidates(ctx: SqlContext, now: number, limit: number): Promise<string[]> {
  const rows = await ctx.driver.query<{ id: string }>(ORPHAN_CANDIDATES_SQL, [now, limit]);
  return rows.map((r) => String(r.id));
}

/** listOrphanCandidates' query: two ranges of the index runs_status_lease (v10). */
export const ORPHAN_CANDIDATES_SQL = `SELECT id FROM runs WHERE status IN ('running', 'idle') AND lease_expires_at < ?
     UNION ALL
     SELECT id FROM runs WHERE status = 'running' AND lease_expires_at IS NULL AND owner IS NULL
     LIMIT ?`;
