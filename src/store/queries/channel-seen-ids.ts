import type { SqlContext } from './context.js';

// The inbound ids the chat channels have seen (src/channels/seen-ids.ts): a row per channel and id,
// kept until it expires. "Seen before?" is the insert itself, so two servers over one database (or a
// restarted one) never both take the same delivery.

export async function markChannelIdSeen(ctx: SqlContext, channel: string, id: string, expiresAt: number, now: number): Promise<boolean> {
  // An expired row is taken over in the same statement (the id may come back after its window, e.g.
  // Telegram restarts update ids after a week of silence); a live one makes the insert do nothing.
  // Through transaction(): on SQLite it joins the group commit of the writes made at the same moment.
  const rows = await ctx.driver.transaction((tx) =>
    tx.query(
      'INSERT INTO channel_seen_ids (channel, seen_id, expires_at) VALUES (?, ?, ?) ON CONFLICT (channel, seen_id) DO UPDATE SET expires_at = excluded.expires_at WHERE channel_seen_ids.expires_at <= ? RETURNING seen_id',
      [channel, id, Math.trunc(expiresAt), Math.trunc(now)],
    ),
  );
  return rows.length === 1;
}

export async function forgetChannelId(ctx: SqlContext, channel: string, id: string): Promise<void> {
  await ctx.driver.transaction((tx) => tx.execute('DELETE FROM channel_seen_ids WHERE channel = ? AND seen_id = ?', [channel, id]));
}

export async function pruneChannelSeenIds(ctx: SqlContext, now: number): Promise<number> {
  return ctx.driver.transaction((tx) => tx.execute('DELETE FROM channel_seen_ids WHERE expires_at <= ?', [Math.trunc(now)]));
}
