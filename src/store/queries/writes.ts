import type { RunEvent } from '../../events/index.js';
import { attachCommittedEvents } from '../committed-events.js';
import { CheckpointFormatError, EventSeqConflictError, RunBusyError, RunNotFoundError } from '../errors.js';
import { num, toRunRecord, toToolCall } from '../rows.js';
import type { SqlRunner, SqlTx } from '../sql/driver.js';
import { CHECKPOINT_FORMAT, type LoadedCheckpoint, type RunWrite, type StoreNotification, type ToolCallRecord } from '../types.js';
import { rowLock, type SqlContext } from './context.js';
import { fence } from './fence.js';

// A run's durable history: the fenced step write, events, checkpoints, tool calls.


/** A write's content (events, logs, checkpoint, tool calls) inside `tx`, after its fence. */
export async function applyWrite(ctx: SqlContext, tx: SqlTx, runWrite: RunWrite): Promise<void> {
  const { runId } = runWrite;
  const now = Date.now();
  if (runWrite.events?.length) await appendEvents(ctx, tx, runId, runWrite.events);
  if (runWrite.messages) {
    const { messages } = runWrite;
    if (messages.replace) await tx.execute('DELETE FROM run_messages WHERE run_id = ?', [runId]);
    await tx.insertRows(
      'run_messages',
      ['run_id', 'idx', 'body'],
      messages.items.map((m, i) => [runId, messages.from + i, JSON.stringify(m)]),
      'ON CONFLICT (run_id, idx) DO UPDATE SET body = excluded.body',
    );
  }
  if (runWrite.toolHistory) {
    const { toolHistory } = runWrite;
    await tx.insertRows(
      'run_tool_history',
      ['run_id', 'idx', 'body'],
      toolHistory.items.map((m, i) => [runId, toolHistory.from + i, JSON.stringify(m)]),
      'ON CONFLICT (run_id, idx) DO UPDATE SET body = excluded.body',
    );
  }
  if (runWrite.toolIntent) {
    const { toolCallId, toolName, input } = runWrite.toolIntent;
    // A call re-run after it was blocked on its first ask starts again from that same intent.
    await tx.execute(
      `INSERT INTO tool_calls (run_id, tool_call_id, tool_name, input, status, started_at) VALUES (?, ?, ?, ?, 'started', ?)
       ON CONFLICT (run_id, tool_call_id) DO UPDATE SET status = 'started', waiting = 0, started_at = excluded.started_at`,
      [runId, toolCallId, toolName, JSON.stringify(input ?? null), now],
    );
  }
  for (const { toolCallId, result } of runWrite.toolResults ?? []) {
    await tx.execute(
      `UPDATE tool_calls SET status = 'completed', result = ?, waiting = 0, finished_at = ? WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`,
      [JSON.stringify(result), now, runId, toolCallId],
    );
  }
  for (const toolCallId of runWrite.interruptedToolCalls ?? []) {
    await tx.execute(`UPDATE tool_calls SET status = 'interrupted', waiting = 0, finished_at = ? WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`, [
      now,
      runId,
      toolCallId,
    ]);
  }
  for (const id of runWrite.consumeInteractions ?? []) {
    const rows = await tx.query<{ tool_call_id: string | null }>('UPDATE interactions SET consumed = 1 WHERE id = ? AND run_id = ? AND consumed = 0 RETURNING tool_call_id', [id, runId]);
    const toolCallId = rows[0]?.tool_call_id;
    // As when the outcome is announced in saveInteraction: the call is past its ask.
    if (toolCallId) await tx.execute(`UPDATE tool_calls SET waiting = 0, passed_ask = 1 WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`, [runId, toolCallId]);
  }
  if (runWrite.checkpoint) {
    const c = runWrite.checkpoint;
    await tx.execute(
      `INSERT INTO run_checkpoints (run_id, format, seq, step, state, message_count, tool_history_count, compactions, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET format = excluded.format, seq = excluded.seq, step = excluded.step, state = excluded.state,
         message_count = excluded.message_count, tool_history_count = excluded.tool_history_count, compactions = excluded.compactions, updated_at = excluded.updated_at`,
      [runId, c.format, c.seq, c.step, JSON.stringify(c.state), c.messageCount, c.toolHistoryCount, c.compactions, now],
    );
  }
}

/**
 * Appends events in `tx` as one row (schema v6: a write's events are one batch, one b-tree cell);
 * a seq already taken is an `EventSeqConflictError` (two writers, one run). Batches never overlap:
 * the one starting last at or before the new batch's end is the only one that could hold its seqs.
 */
export async function appendEvents(ctx: SqlContext, tx: SqlTx, runId: string, events: readonly RunEvent[]): Promise<void> {
  const seqs = events.map((e) => e.seq);
  const first = Math.min(...seqs);
  const last = Math.max(...seqs);
  const before = await tx.query<{ last_seq: unknown }>('SELECT last_seq FROM run_events WHERE run_id = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1', [
    runId,
    last,
  ]);
  if ((before[0] && num(before[0].last_seq) >= first) || new Set(seqs).size !== seqs.length) throw new EventSeqConflictError(runId, events[0]!.seq);
  const encoded = encodeEvents(events);
  try {
    await tx.execute('INSERT INTO run_events (run_id, first_seq, last_seq, events) VALUES (?, ?, ?, ?)', [runId, first, last, encoded]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new EventSeqConflictError(runId, events[0]!.seq);
    throw error;
  }
  const notification: StoreNotification = { type: 'events', runId, seq: events[events.length - 1]!.seq, types: [...new Set(events.map((e) => e.type))] };
  attachCommittedEvents(notification, () => decodeEvents(encoded, runId));
  await ctx.transport.inTx(tx, notification);
}

/**
 * A batch's column: `[seq, type, at, data]` per event, in seq order (no key names repeated per event).
 * Since schema v7 `at` is a number when it can be: the milliseconds since the batch's previous
 * numbered event (the first: since the epoch), for a time that `toISOString()` gives back exactly;
 * any other string is kept as it is. A v6 batch (every `at` a string) reads the same. The ISO string
 * was 26 of an event's ~160 bytes, and the event log is most of what a step writes.
 */
function encodeEvents(events: readonly RunEvent[]): string {
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  let clock = 0;
  let last: string | undefined;
  return JSON.stringify(
    sorted.map((e) => {
      // Most of a batch's events share their millisecond: no parse for those (parse + check ~2 µs).
      if (e.at === last) return [e.seq, e.type, 0, e.data ?? null];
      const ms = Date.parse(e.at);
      if (!Number.isFinite(ms) || new Date(ms).toISOString() !== e.at) return [e.seq, e.type, e.at, e.data ?? null];
      const since = ms - clock;
      clock = ms;
      last = e.at;
      return [e.seq, e.type, since, e.data ?? null];
    }),
  );
}

export async function appendOrphanEvents(
  ctx: SqlContext,
  runId: string,
  make: (nextSeq: number) => RunEvent[],
  patch?: RunWrite['run'],
): Promise<RunEvent[]> {
  return ctx.driver.transaction(async (tx) => {
    const rows = await tx.query(`SELECT * FROM runs WHERE id = ? ${rowLock(ctx, 'FOR UPDATE')}`, [runId]);
    if (!rows[0]) throw new RunNotFoundError(runId);
    const run = toRunRecord(rows[0]);
    if (run.owner && run.leaseExpiresAt && Date.parse(run.leaseExpiresAt) >= Date.now()) throw new RunBusyError(runId, run.owner, run.leaseExpiresAt);
    const last = await lastSeqIn(tx, runId);
    const events = make(last + 1);
    // Take the run for the length of this write (a claim: a late write of its last driver is refused).
    const marker = `orphan-writer:${process.pid}:${Date.now()}`;
    await tx.execute('UPDATE runs SET owner = ?, epoch = epoch + 1 WHERE id = ?', [marker, runId]);
    await fence(ctx, tx, runId, { owner: marker, epoch: run.epoch + 1 }, { ...patch, release: true });
    if (events.length) await appendEvents(ctx, tx, runId, events);
    return events;
  });
}

export async function readEvents(ctx: SqlContext, runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<RunEvent[]> {
  const afterSeq = options.afterSeq ?? 0;
  const limit = options.limit ?? 10_000;
  // The batch holding afterSeq + 1 starts at or before it: found by one index seek, then the run's
  // batches from there in order (each holds at least one event: limit + 1 batches are enough).
  const start = await ctx.driver.query<{ first_seq: unknown }>('SELECT first_seq FROM run_events WHERE run_id = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1', [
    runId,
    afterSeq + 1,
  ]);
  const from = start[0] ? num(start[0].first_seq) : afterSeq + 1;
  const rows = await ctx.driver.query<{ events: string }>('SELECT events FROM run_events WHERE run_id = ? AND first_seq >= ? ORDER BY first_seq LIMIT ?', [
    runId,
    from,
    limit + 1,
  ]);
  const out: RunEvent[] = [];
  for (const row of rows) {
    for (const event of decodeEvents(row.events, runId)) {
      if (event.seq <= afterSeq) continue;
      if (out.length === limit) return out;
      out.push(event);
    }
  }
  return out;
}

/** A batch's events (see encodeEvents: a numbered `at` counts from the previous numbered one). */
export function decodeEvents(text: string, runId: string): RunEvent[] {
  let clock = 0;
  let last: string | undefined;
  return (JSON.parse(text) as [number, string, string | number, unknown][]).map(([seq, type, at, data]) => {
    if (typeof at === 'string') return { seq, runId, type, at, data } as RunEvent;
    if (at !== 0 || last === undefined) {
      clock += at;
      last = new Date(clock).toISOString();
    }
    return { seq, runId, type, at: last, data } as RunEvent;
  });
}

/** The last event seq of a run, 0 when it has none; `on` is the driver or an open transaction. */
export async function lastSeqIn(on: SqlRunner, runId: string): Promise<number> {
  const rows = await on.query<{ last_seq: unknown }>('SELECT last_seq FROM run_events WHERE run_id = ? ORDER BY first_seq DESC LIMIT 1', [runId]);
  return rows[0] ? num(rows[0].last_seq) : 0;
}

/**
 * A run's checkpoint, the log entries it counts and its last event seq, in one statement: one
 * consistent snapshot (the logs are read at the counts of the row read with them) and one round
 * trip instead of four (the checkpoint, then its messages, tool history and last seq). Part 0 is the
 * checkpoint row (its state in `body`), 1 the messages, 2 the tool history.
 */
const LOAD_CHECKPOINT = `SELECT 0 AS part, 0 AS idx, c.state AS body, c.format, c.seq, c.step, c.message_count, c.tool_history_count, c.compactions,
    (SELECT e.last_seq FROM run_events e WHERE e.run_id = c.run_id ORDER BY e.first_seq DESC LIMIT 1) AS last_seq
  FROM run_checkpoints c WHERE c.run_id = ?
UNION ALL
SELECT 1, m.idx, m.body, NULL, NULL, NULL, NULL, NULL, NULL, NULL
  FROM run_messages m JOIN run_checkpoints c ON c.run_id = m.run_id WHERE m.run_id = ? AND m.idx < c.message_count
UNION ALL
SELECT 2, h.idx, h.body, NULL, NULL, NULL, NULL, NULL, NULL, NULL
  FROM run_tool_history h JOIN run_checkpoints c ON c.run_id = h.run_id WHERE h.run_id = ? AND h.idx < c.tool_history_count`;

interface CheckpointPartRow {
  part: unknown;
  idx: unknown;
  body: string;
  format: unknown;
  seq: unknown;
  step: unknown;
  message_count: unknown;
  tool_history_count: unknown;
  compactions: unknown;
  last_seq: unknown;
}

export async function loadCheckpoint(ctx: SqlContext, runId: string): Promise<LoadedCheckpoint | undefined> {
  const rows = await ctx.driver.query<CheckpointPartRow>(LOAD_CHECKPOINT, [runId, runId, runId]);
  const row = rows.find((r) => num(r.part) === 0);
  if (!row) return undefined;
  const format = num(row.format);
  if (format !== CHECKPOINT_FORMAT) throw new CheckpointFormatError(runId, format);
  // A compound SELECT has no order of its own: each log is put in index order here.
  const log = (part: number) =>
    rows
      .filter((r) => num(r.part) === part)
      .map((r) => ({ idx: num(r.idx), body: r.body }))
      .sort((a, b) => a.idx - b.idx)
      .map((r) => JSON.parse(r.body) as unknown);
  return {
    checkpoint: {
      format: CHECKPOINT_FORMAT,
      seq: num(row.seq),
      step: num(row.step),
      state: JSON.parse(String(row.body)) as Record<string, unknown>,
      messageCount: num(row.message_count),
      toolHistoryCount: num(row.tool_history_count),
      compactions: num(row.compactions),
    },
    messages: log(1),
    toolHistory: log(2),
    lastSeq: row.last_seq === null || row.last_seq === undefined ? 0 : num(row.last_seq),
  };
}

export async function listToolCalls(ctx: SqlContext, runId: string, options: { unfinished?: boolean } = {}): Promise<ToolCallRecord[]> {
  const unfinished = options.unfinished ? " AND status <> 'completed'" : '';
  const rows = await ctx.driver.query(`SELECT * FROM tool_calls WHERE run_id = ?${unfinished} ORDER BY started_at, tool_call_id`, [runId]);
  return rows.map(toToolCall);
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
