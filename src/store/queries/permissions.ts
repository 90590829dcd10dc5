import { toAudit, toPermission } from '../rows.js';
import type { SqlParam, SqlTx } from '../sql/driver.js';
import type { AuditEntry, AuditQuery, UserPermissionRecord } from '../types.js';
import type { SqlContext } from './context.js';

// Per-user permission rules ("always allow" answers) and the audit log of permission decisions.

export async function listUserPermissions(ctx: SqlContext, userId: string): Promise<UserPermissionRecord[]> {
  const rows = await ctx.driver.query('SELECT * FROM user_permissions WHERE user_id = ? ORDER BY created_at, rule', [userId]);
  return rows.map(toPermission);
}

export async function addUserPermission(ctx: SqlContext, record: Omit<UserPermissionRecord, 'createdAt'> & { createdAt?: string }): Promise<void> {
  await ctx.driver.execute(
    'INSERT INTO user_permissions (user_id, rule, behavior, created_at, created_by) VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, rule, behavior) DO NOTHING',
    [record.userId, record.rule, record.behavior, record.createdAt ? Date.parse(record.createdAt) : Date.now(), record.createdBy ?? null],
  );
}

export async function removeUserPermission(ctx: SqlContext, userId: string, rule: string, behavior?: 'allow' | 'deny'): Promise<number> {
  if (behavior) return ctx.driver.execute('DELETE FROM user_permissions WHERE user_id = ? AND rule = ? AND behavior = ?', [userId, rule, behavior]);
  return ctx.driver.execute('DELETE FROM user_permissions WHERE user_id = ? AND rule = ?', [userId, rule]);
}

export async function appendAudit(ctx: SqlContext, entry: AuditEntry): Promise<void> {
  // Through transaction(), not a bare statement: on SQLite it joins the group commit of the run
  // writes made at the same moment. A run driven here writes its gate's rows with its own writes
  // instead (RunWrite.audit, insertAudit): this is for everything else.
  await ctx.driver.transaction((tx) => insertAudit(tx, [entry]));
}

const AUDIT_COLUMNS = ['at', 'run_id', 'user_id', 'tool_call_id', 'tool_name', 'behavior', 'reason', 'source', 'rule', 'data'] as const;

/** Audit rows inside `tx` (appendAudit's own transaction, or a run's write: RunWrite.audit). */
export async function insertAudit(tx: SqlTx, entries: readonly AuditEntry[]): Promise<void> {
  await tx.insertRows(
    'audit_log',
    AUDIT_COLUMNS,
    entries.map((entry) => [
      Date.parse(entry.at),
      entry.runId,
      entry.userId,
      entry.toolCallId,
      entry.toolName,
      entry.behavior,
      entry.reason,
      entry.source,
      entry.rule,
      entry.data === null ? null : JSON.stringify(entry.data),
    ]),
  );
}

export async function listAudit(ctx: SqlContext, query: AuditQuery = {}): Promise<AuditEntry[]> {
  const where: string[] = [];
  const params: SqlParam[] = [];
  if (query.runId) {
    where.push('run_id = ?');
    params.push(query.runId);
  }
  if (query.userId) {
    where.push('user_id = ?');
    params.push(query.userId);
  }
  if (query.since) {
    where.push('at >= ?');
    params.push(Date.parse(query.since));
  }
  if (query.until) {
    where.push('at < ?');
    params.push(Date.parse(query.until));
  }
  if (query.behavior) {
    where.push('behavior = ?');
    params.push(query.behavior);
  }
  params.push(query.limit ?? 1000);
  const rows = await ctx.driver.query(`SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT ?`, params);
  return rows.map(toAudit);
}
