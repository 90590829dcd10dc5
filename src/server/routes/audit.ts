import { Hono } from 'hono';
import type { AuditEntry } from '../../store/index.js';
import { scopeUser } from '../access.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { runFor } from '../lookups.js';
import { readQuery } from '../read-body.js';
import { auditQuerySchema } from '../schemas.js';


const CSV_COLUMNS = ['at', 'runId', 'userId', 'toolCallId', 'toolName', 'behavior', 'reason', 'source', 'rule', 'data'] as const;

/** One CSV cell, quoted when needed; a leading = + - @ is defused so a spreadsheet never runs it as a formula. */
function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function auditCsv(entries: readonly AuditEntry[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const entry of entries) lines.push(CSV_COLUMNS.map((key) => csvCell(entry[key])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** The permission audit log: every decision with why it was made; a user sees their own entries. */
export function auditRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/audit', async (c) => {
    const principal = c.get('principal');
    const query = readQuery(c, auditQuerySchema);
    if (query.runId !== undefined) await runFor(deps.store, principal, query.runId);
    const entries = await deps.store.listAudit({
      runId: query.runId,
      userId: scopeUser(principal, query.userId),
      since: query.since,
      until: query.until,
      behavior: query.decision,
      limit: query.limit ?? 200,
    });
    if (query.format === undefined) return c.json({ entries });
    // A download: the same entries as a file the browser saves rather than shows.
    const name = `sage-audit.${query.format}`;
    c.header('content-disposition', `attachment; filename="${name}"`);
    if (query.format === 'json') return c.body(JSON.stringify({ entries }, null, 2), 200, { 'content-type': 'application/json; charset=utf-8' });
    return c.body(auditCsv(entries), 200, { 'content-type': 'text/csv; charset=utf-8' });
  });
  return app;
}
