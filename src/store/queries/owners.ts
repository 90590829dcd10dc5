import { num } from '../rows.js';
import type { Row } from '../sql/driver.js';
import type { RunOwnerRecord } from '../types.js';
import { placeholders, rowLock, type SqlContext } from './context.js';

// Lease owners' processes (table run_owners, v12): who holds a lease, so that a dead one on the
// same host is noticed without waiting for the lease to run out.

const toOwner = (row: Row): RunOwnerRecord => ({
  owner: String(row.owner),
  host: String(row.host),
  pid: num(row.pid),
  bootId: row.boot_id === null || row.boot_id === undefined ? null : String(row.boot_id),
  startTime: row.start_time === null || row.start_time === undefined ? null : String(row.start_time),
});

export async function registerOwner(ctx: SqlContext, record: RunOwnerRecord): Promise<void> {
  await ctx.driver.execute(
    `INSERT INTO run_owners (owner, host, pid, boot_id, start_time, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (owner) DO UPDATE SET host = excluded.host, pid = excluded.pid, boot_id = excluded.boot_id,
       start_time = excluded.start_time, created_at = excluded.created_at`,
    [record.owner, record.host, record.pid, record.bootId, record.startTime, Date.now()],
  );
}

export async function forgetOwner(ctx: SqlContext, owner: string): Promise<void> {
  await ctx.driver.execute('DELETE FROM run_owners WHERE owner = ?', [owner]);
}

export async function getOwners(ctx: SqlContext, owners: readonly string[]): Promise<RunOwnerRecord[]> {
  const ids = [...new Set(owners)];
  if (ids.length === 0) return [];
  const rows = await ctx.driver.query(`SELECT * FROM run_owners WHERE owner IN (${placeholders(ids.length)})`, ids);
  return rows.map(toOwner);
}

export async function listOwnersOnHost(ctx: SqlContext, host: string): Promise<RunOwnerRecord[]> {
  // A few rows by index: an owner that closes forgets itself, one found dead is forgotten with its leases.
  const rows = await ctx.driver.query('SELECT * FROM run_owners WHERE host = ?', [host]);
  return rows.map(toOwner);
}

export async function expireOwner(ctx: SqlContext, owner: string): Promise<string[]> {
  return ctx.driver.transaction(async (tx) => {
    // Rows locked in id order (Postgres), as renewals and claim sweeps lock them: no deadlock with either.
    const lock = rowLock(ctx, 'ORDER BY id FOR UPDATE');
    const rows = await tx.query<{ id: string }>(
      `UPDATE runs SET lease_expires_at = 0
       WHERE id IN (SELECT id FROM runs WHERE owner = ? AND status IN ('running', 'idle') AND lease_expires_at IS NOT NULL ${lock})
       RETURNING id`,
      [owner],
    );
    await tx.execute('DELETE FROM run_owners WHERE owner = ?', [owner]);
    return rows.map((r) => String(r.id));
  });
}
