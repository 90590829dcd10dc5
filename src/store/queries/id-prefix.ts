import type { SqlContext } from './context.js';

// Ids by prefix, for commands that take an id the way git takes a commit: a unique start is enough.

/** `%`, `_` and the escape character itself match literally in the LIKE pattern built from `prefix`. */
export function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

async function idsStartingWith(ctx: SqlContext, table: 'runs' | 'interactions', prefix: string, limit: number): Promise<string[]> {
  // LIKE is case-insensitive in SQLite and case-sensitive in Postgres: comparing the first
  // characters as well makes both match the prefix exactly as given (the LIKE keeps the index path).
  const rows = await ctx.driver.query<{ id: string }>(
    `SELECT id FROM ${table} WHERE id LIKE ? ESCAPE '\\' AND substr(id, 1, ${Math.trunc(prefix.length)}) = ? ORDER BY id LIMIT ?`,
    [likePrefix(prefix), prefix, limit],
  );
  return rows.map((r) => r.id);
}

export function findRunIds(ctx: SqlContext, prefix: string, limit: number): Promise<string[]> {
  return idsStartingWith(ctx, 'runs', prefix, limit);
}

export function findInteractionIds(ctx: SqlContext, prefix: string, limit: number): Promise<string[]> {
  return idsStartingWith(ctx, 'interactions', prefix, limit);
}
