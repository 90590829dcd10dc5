import type { RunEvent } from '../../events/index.js';
import { attachCommittedEvents } from '../committed-events.js';
import { CheckpointFormatError, EventSeqConflictError, RunBusyError, RunNotFoundError } from '../errors.js';
import { num, toRunRecord, toToolCall } from '../rows.js';
import type { Row, SqlRunner, SqlTx } from '../sql/driver.js';
import { CHECKPOINT_FORMAT, type LoadedCheckpoint, type RunResumeState, type RunWrite, type StoreNotification, type ToolCallRecord } from '../types.js';
import { rowLock, type SqlContext } from './context.js';
import { fence } from './fence.js';
import { insertAudit } from './permissions.js';
import { RUN_COLUMNS, RUN_WITH_OPTIONS } from './runs.js';
import { jsonOf } from '../json-text.js';

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
      messages.items.map((m, i) => [runId, messages.from + i, jsonOf(m)]),
      'ON CONFLICT (run_id, idx) DO UPDATE SET body = excluded.body',
    );
  }
  if (runWrite.toolHistory) {
    const { toolHistory } = runWrite;
    await tx.insertRows(
      'run_tool_history',
      ['run_id', 'idx', 'body'],
      toolHistory.items.map((m, i) => [runId, toolHistory.from + i, jsonOf(m)]),
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
  if (runWrite.audit?.length) await insertAudit(tx, runWrite.audit);
  if (runWrite.checkpoint) {
    const c = runWrite.checkpoint;
    await tx.execute(
      `INSERT INTO run_checkpoints (run_id, format, seq, step, state, message_count, tool_history_count, compactions, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET format = excluded.format, seq = excluded.seq, step = excluded.step, state = excluded.state,
         message_count = excluded.message_count, tool_history_count = excluded.tool_history_count, compactions = excluded.compactions, updated_at = excluded.updated_at`,
      [runId, c.format, c.seq, c.step, jsonOf(c.state), c.messageCount, c.toolHistoryCount, c.compactions, now],
    );
  }
}

// Typed casts: Postgres gives a bare parameter in a SELECT list the type text.
const APPEND_BATCH = `INSERT INTO run_events (run_id, first_seq, last_seq, events)
  SELECT ?, CAST(? AS INTEGER), CAST(? AS INTEGER), ? WHERE NOT EXISTS (
    SELECT 1 FROM (SELECT last_seq FROM run_events WHERE run_id = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1) prev WHERE prev.last_seq >= ?)`;

/**
 * Appends events in `tx` as one row (schema v6: a write's events are one batch, one b-tree cell);
 * a seq already taken is an `EventSeqConflictError` (two writers, one run). Batches never overlap:
 * the one starting last at or before the new batch's end is the only one that could hold its seqs.
 */
export async function appendEvents(ctx: SqlContext, tx: SqlTx, runId: string, events: readonly RunEvent[]): Promise<void> {
  const seqs = events.map((e) => e.seq);
  const first = Math.min(...seqs);
  const last = Math.max(...seqs);
  if (new Set(seqs).size !== seqs.length) throw new EventSeqConflictError(runId, events[0]!.seq);
  const encoded = encodeEvents(events);
  let inserted: number;
  try {
    // The check and the insert are one statement (two per approval cycle fewer): nothing is inserted
    // when the batch starting last at or before this one's end reaches its start.
    inserted = await tx.execute(APPEND_BATCH, [runId, first, last, encoded, runId, last, first]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new EventSeqConflictError(runId, events[0]!.seq);
    throw error;
  }
  if (inserted === 0) throw new EventSeqConflictError(runId, events[0]!.seq);
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
export function encodeEvents(events: readonly RunEvent[]): string {
  // A write's events come in seq order: sorted (a copy) only when they are not.
  let sorted = events;
  for (let i = 1; i < events.length; i++) {
    if (events[i]!.seq < events[i - 1]!.seq) {
      sorted = [...events].sort((a, b) => a.seq - b.seq);
      break;
    }
  }
  let clock = 0;
  let last: string | undefined;
  const rows: unknown[] = [];
  for (const e of sorted) {
    // Most of a batch's events share their millisecond (the same string): nothing to check.
    if (e.at === last) {
      rows.push([e.seq, e.type, 0, e.data ?? null]);
      continue;
    }
    const ms = exactIsoMs(e.at);
    if (ms === undefined) {
      rows.push([e.seq, e.type, e.at, e.data ?? null]);
      continue;
    }
    rows.push([e.seq, e.type, ms - clock, e.data ?? null]);
    clock = ms;
    last = e.at;
  }
  return JSON.stringify(rows);
}

/** The second of the last time exactIsoMs parsed: its first 20 characters (none yet: a character no time starts with) and its milliseconds. */
let knownSecond = '\u0000';
let knownSecondMs = 0;

/**
 * The milliseconds of `at` when `new Date(ms).toISOString() === at`, else undefined. A time in the
 * second of the last one parsed (the same first 20 characters, `YYYY-MM-DDTHH:MM:SS.`, then three
 * digits and `Z`) is that second plus its digits, exact without a parse and a format (~1 µs each on a
 * small machine); any other goes through both.
 */
function exactIsoMs(at: string): number | undefined {
  if (at.length === 24 && at.charCodeAt(23) === 90 && at.startsWith(knownSecond)) {
    const frac = digits3(at);
    if (frac >= 0) return knownSecondMs + frac;
  }
  const ms = Date.parse(at);
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== at) return undefined;
  // Only a 24-character time (a year 0 to 9999) has its second as its first 20 characters.
  if (at.length === 24) {
    knownSecond = at.slice(0, 20);
    knownSecondMs = ms - digits3(at);
  }
  return ms;
}

/** The number written by characters 20-22 of `iso` (000-999), -1 when one is not a digit. */
function digits3(iso: string): number {
  const a = iso.charCodeAt(20) - 48;
  const b = iso.charCodeAt(21) - 48;
  const c = iso.charCodeAt(22) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 && c >= 0 && c <= 9 ? a * 100 + b * 10 + c : -1;
}

export async function appendOrphanEvents(
  ctx: SqlContext,
  runId: string,
  make: (nextSeq: number) => RunEvent[],
  patch?: RunWrite['run'],
): Promise<RunEvent[]> {
  return ctx.driver.transaction(async (tx) => {
    // The lease and the claim only: this write does not rebuild the run, so its options are not read.
    const rows = await tx.query<{ owner: string | null; lease_expires_at: unknown; epoch: unknown }>(
      `SELECT owner, lease_expires_at, epoch FROM runs WHERE id = ? ${rowLock(ctx, 'FOR UPDATE')}`,
      [runId],
    );
    if (!rows[0]) throw new RunNotFoundError(runId);
    const run = { owner: rows[0].owner, leaseExpiresAt: rows[0].lease_expires_at === null ? null : num(rows[0].lease_expires_at), epoch: num(rows[0].epoch) };
    if (run.owner && run.leaseExpiresAt !== null && run.leaseExpiresAt >= Date.now()) throw new RunBusyError(runId, run.owner, new Date(run.leaseExpiresAt).toISOString());
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
 * trip instead of four (the checkpoint, then its messages, tool history and last seq). Each log
 * comes back as one text, its entries' JSON joined by commas in index order: one row and one
 * JSON.parse per log, instead of a row (an object the driver builds column by column) and a parse
 * per entry, on every resume. `run` is the expression of the run's id; the columns are `cp_…`.
 */
type Concat = (body: string, idx: string) => string;
const checkpointColumns = (concat: Concat, run: string) => `c.state AS cp_state, c.format AS cp_format, c.seq AS cp_seq, c.step AS cp_step,
    c.message_count AS cp_message_count, c.tool_history_count AS cp_tool_history_count, c.compactions AS cp_compactions,
    (SELECT e.last_seq FROM run_events e WHERE e.run_id = ${run} ORDER BY e.first_seq DESC LIMIT 1) AS cp_last_seq,
    (SELECT ${concat('m.body', 'm.idx')} FROM run_messages m WHERE m.run_id = ${run} AND m.idx < c.message_count) AS cp_messages,
    (SELECT ${concat('h.body', 'h.idx')} FROM run_tool_history h WHERE h.run_id = ${run} AND h.idx < c.tool_history_count) AS cp_tool_history`;
const CONCAT: Record<'sqlite' | 'postgres', Concat> = {
  sqlite: (body, idx) => `group_concat(${body}, ',' ORDER BY ${idx})`,
  postgres: (body, idx) => `string_agg(${body}, ',' ORDER BY ${idx})`,
};
const loadCheckpointSql = (dialect: 'sqlite' | 'postgres') => `SELECT ${checkpointColumns(CONCAT[dialect], 'c.run_id')} FROM run_checkpoints c WHERE c.run_id = ?`;
const LOAD_CHECKPOINT = { sqlite: loadCheckpointSql('sqlite'), postgres: loadCheckpointSql('postgres') };

/**
 * A run's calls without a result, as one JSON array of `[tool_call_id, tool_name, input, status,
 * waiting, passed_ask, result, started_at, finished_at]` in listToolCalls' order (input and result
 * stay the JSON texts they are stored as). Null (Postgres) or `[]` (SQLite) when there is none.
 */
const UNFINISHED_CALLS = {
  sqlite: `(SELECT json_group_array(json_array(t.tool_call_id, t.tool_name, t.input, t.status, t.waiting, t.passed_ask, t.result, t.started_at, t.finished_at) ORDER BY t.started_at, t.tool_call_id)
    FROM tool_calls t WHERE t.run_id = r.id AND t.status <> 'completed')`,
  postgres: `(SELECT json_agg(json_build_array(t.tool_call_id, t.tool_name, t.input, t.status, t.waiting, t.passed_ask, t.result, t.started_at, t.finished_at) ORDER BY t.started_at, t.tool_call_id)::text
    FROM tool_calls t WHERE t.run_id = r.id AND t.status <> 'completed')`,
};
const loadResumeSql = (dialect: 'sqlite' | 'postgres') => `SELECT ${RUN_COLUMNS}, ${checkpointColumns(CONCAT[dialect], 'r.id')},
    ${UNFINISHED_CALLS[dialect]} AS unfinished_calls
  FROM ${RUN_WITH_OPTIONS} LEFT JOIN run_checkpoints c ON c.run_id = r.id WHERE r.id = ?`;
const LOAD_RESUME = { sqlite: loadResumeSql('sqlite'), postgres: loadResumeSql('postgres') };

interface CheckpointRow {
  cp_state: string | null;
  cp_format: unknown;
  cp_seq: unknown;
  cp_step: unknown;
  cp_message_count: unknown;
  cp_tool_history_count: unknown;
  cp_compactions: unknown;
  cp_last_seq: unknown;
  cp_messages: string | null;
  cp_tool_history: string | null;
}

/** The checkpoint of a row with checkpointColumns; undefined when the run has none (cp_state null). */
function toLoadedCheckpoint(runId: string, row: CheckpointRow): LoadedCheckpoint | undefined {
  if (row.cp_state === null || row.cp_state === undefined) return undefined;
  const format = num(row.cp_format);
  if (format !== CHECKPOINT_FORMAT) throw new CheckpointFormatError(runId, format);
  const log = (joined: string | null) => (joined === null ? [] : (JSON.parse(`[${joined}]`) as unknown[]));
  return {
    checkpoint: {
      format: CHECKPOINT_FORMAT,
      seq: num(row.cp_seq),
      step: num(row.cp_step),
      state: JSON.parse(String(row.cp_state)) as Record<string, unknown>,
      messageCount: num(row.cp_message_count),
      toolHistoryCount: num(row.cp_tool_history_count),
      compactions: num(row.cp_compactions),
    },
    messages: log(row.cp_messages),
    toolHistory: log(row.cp_tool_history),
    lastSeq: lastSeqOf(row),
  };
}

const lastSeqOf = (row: CheckpointRow) => (row.cp_last_seq === null || row.cp_last_seq === undefined ? 0 : num(row.cp_last_seq));

export async function loadCheckpoint(ctx: SqlContext, runId: string): Promise<LoadedCheckpoint | undefined> {
  const [row] = await ctx.driver.query<CheckpointRow>(LOAD_CHECKPOINT[ctx.driver.dialect], [runId]);
  return row ? toLoadedCheckpoint(runId, row) : undefined;
}

/**
 * Store.loadRunForResume: the run's row with its options, the checkpoint columns and the unfinished
 * calls, in one statement (three round trips before: getRun, loadCheckpoint, listToolCalls).
 */
export async function loadRunForResume(ctx: SqlContext, runId: string): Promise<RunResumeState | undefined> {
  const [row] = await ctx.driver.query<Row & CheckpointRow & { unfinished_calls: string | null }>(LOAD_RESUME[ctx.driver.dialect], [runId]);
  if (!row) return undefined;
  const calls = row.unfinished_calls === null ? [] : (JSON.parse(row.unfinished_calls) as unknown[][]);
  return {
    run: toRunRecord(row),
    checkpoint: toLoadedCheckpoint(runId, row),
    lastSeq: lastSeqOf(row),
    unfinishedCalls: calls.map(([tool_call_id, tool_name, input, status, waiting, passed_ask, result, started_at, finished_at]) =>
      toToolCall({ run_id: runId, tool_call_id, tool_name, input, status, waiting, passed_ask, result, started_at, finished_at }),
    ),
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
