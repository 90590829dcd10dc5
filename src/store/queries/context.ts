import type { SqlDriver } from '../sql/driver.js';
import type { NotificationTransport } from '../sql/notification-transport.js';

/** What every query module works with: the driver, and where notifications go when a transaction commits. */
export interface SqlContext {
  readonly driver: SqlDriver;
  readonly transport: NotificationTransport;
}

/** `?, ?, …` for an `IN (…)` list of `n` values. */
export const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** Postgres row locks; SQLite has none (its write transaction already holds the whole database). */
export const rowLock = (ctx: SqlContext, clause: string) => (ctx.driver.dialect === 'postgres' ? clause : '');
