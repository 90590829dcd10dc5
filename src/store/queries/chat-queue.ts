import { toQueuedChatMessage } from '../rows.js';
import type { QueuedChatMessage } from '../types.js';
import type { SqlContext } from './context.js';

// The chat queue (channels): messages that arrived while their run worked, kept until the run's
// next-message ask takes them. A handover is two steps around the answer that delivers them
// (reserve, then settle), because that answer is committed by the durable runner in its own
// transaction; the reservation names the handover, so after a crash the caller can tell from the
// answer's record whether the messages reached the run (see src/channels/hub/conversation.ts).

export async function queueChatMessage(ctx: SqlContext, sessionKey: string, message: Record<string, unknown>): Promise<QueuedChatMessage> {
  // Through transaction(): on SQLite it joins the group commit of the writes made at the same moment.
  const rows = await ctx.driver.transaction((tx) =>
    tx.query('INSERT INTO chat_queue (session_key, message, reserved_for, queued_at) VALUES (?, ?, NULL, ?) RETURNING *', [sessionKey, JSON.stringify(message), Date.now()]),
  );
  return toQueuedChatMessage(rows[0]!);
}

export async function listChatQueue(ctx: SqlContext, query: { sessionKey?: string } = {}): Promise<QueuedChatMessage[]> {
  const rows = query.sessionKey
    ? await ctx.driver.query('SELECT * FROM chat_queue WHERE session_key = ? ORDER BY seq', [query.sessionKey])
    : await ctx.driver.query('SELECT * FROM chat_queue ORDER BY seq');
  return rows.map(toQueuedChatMessage);
}

export async function reserveChatQueue(ctx: SqlContext, sessionKey: string, token: string): Promise<QueuedChatMessage[]> {
  // One statement: of two reservations at once (two instances), each message goes to one of them.
  // Messages already reserved for `token` come back too, so a handover can be tried again.
  const rows = await ctx.driver.transaction((tx) =>
    tx.query('UPDATE chat_queue SET reserved_for = ? WHERE session_key = ? AND (reserved_for IS NULL OR reserved_for = ?) RETURNING *', [token, sessionKey, token]),
  );
  return rows.map(toQueuedChatMessage).sort((a, b) => a.seq - b.seq);
}

export async function settleChatQueue(ctx: SqlContext, token: string, outcome: 'delivered' | 'released'): Promise<number> {
  return ctx.driver.transaction((tx) =>
    outcome === 'delivered'
      ? tx.execute('DELETE FROM chat_queue WHERE reserved_for = ?', [token])
      : tx.execute('UPDATE chat_queue SET reserved_for = NULL WHERE reserved_for = ?', [token]),
  );
}

export async function dropChatQueue(ctx: SqlContext, sessionKey: string): Promise<number> {
  return ctx.driver.transaction((tx) => tx.execute('DELETE FROM chat_queue WHERE session_key = ? AND reserved_for IS NULL', [sessionKey]));
}
