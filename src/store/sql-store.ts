import type { RunEvent } from '../events/index.js';
import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  InteractionNotFoundError,
  type InteractionRequest,
  type InteractionResponse,
  type PriorOutcome,
} from '../interaction/index.js';
import { CheckpointFormatError, EventSeqConflictError, LeaseLostError, RunBusyError, RunNotFoundError } from './errors.js';
import type { NotificationHub } from './notification-hub.js';
import { num, toAudit, toEvent, toInteraction, toPermission, toRunRecord, toToolCall } from './rows.js';
import type { SqlDriver, SqlParam, SqlRunner, SqlTx } from './sql/driver.js';
import {
  CHECKPOINT_FORMAT,
  FINISHED_STATUSES,
  STORE_SPECIFICATION_VERSION,
  type AuditEntry,
  type AuditQuery,
  type InteractionQuery,
  type InteractionRecord,
  type LoadedCheckpoint,
  type NewRun,
  type PruneResult,
  type RunFence,
  type RunQuery,
  type RunRecord,
  type RunWrite,
  type Store,
  type StoredRunStatus,
  type StoreNotification,
  type ToolCallRecord,
  type Unsubscribe,
  type UserPermissionRecord,
} from './types.js';

/** How notifications leave a transaction and reach subscribers (in-process, or LISTEN/NOTIFY). */
export interface NotificationTransport {
  /** Sends when the transaction commits, never before. */
  inTx(tx: SqlTx, notification: StoreNotification): Promise<void>;
  publish(notification: StoreNotification): Promise<void>;
  /** Ready to receive (Postgres: the LISTEN connection is up). */
  listen(): Promise<void>;
  close(): Promise<void>;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * The Store over SQL, shared by the SQLite and Postgres backends: the same statements, the same
 * compare-and-set semantics, one contract test suite. Dialect differences are few and marked.
 */
export class SqlStore implements Store {
  readonly specificationVersion = STORE_SPECIFICATION_VERSION;
  readonly backend: 'sqlite' | 'postgres';
  readonly location: string;

  constructor(
    readonly driver: SqlDriver,
    private readonly hub: NotificationHub,
    private readonly transport: NotificationTransport,
  ) {
    this.backend = driver.dialect;
    this.location = driver.location;
  }

  // Runs

  async createRun(run: NewRun, owner: { id: string; leaseMs: number } | null): Promise<RunRecord> {
    const now = Date.now();
    // Without an owner the run is queued: running, unowned, so the next recover() or server picks it up.
    const rows = await this.driver.transaction(async (tx) => {
      const inserted = await tx.query(
        `INSERT INTO runs (id, status, user_id, session_id, channel, task, options, owner, lease_expires_at, created_at, updated_at, epoch)
         VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, 1) RETURNING *`,
        [run.id, run.userId, run.sessionId, run.channel, run.task, JSON.stringify(run.options), owner?.id ?? null, owner ? now + owner.leaseMs : null, now, now],
      );
      await this.transport.inTx(tx, { type: 'run', runId: run.id, status: 'running', owner: owner?.id ?? null });
      return inserted;
    });
    return toRunRecord(rows[0]!);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const rows = await this.driver.query('SELECT * FROM runs WHERE id = ?', [runId]);
    return rows[0] ? toRunRecord(rows[0]) : undefined;
  }

  async listRuns(query: RunQuery = {}): Promise<RunRecord[]> {
    const where: string[] = [];
    const params: SqlParam[] = [];
    if (query.status?.length) {
      where.push(`status IN (${placeholders(query.status.length)})`);
      params.push(...query.status);
    }
    if (query.userId) {
      where.push('user_id = ?');
      params.push(query.userId);
    }
    if (query.sessionId) {
      where.push('session_id = ?');
      params.push(query.sessionId);
    }
    params.push(query.limit ?? 100);
    const rows = await this.driver.query(
      `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`,
      params,
    );
    return rows.map(toRunRecord);
  }

  // Ownership

  async claimRun(runId: string, owner: string, leaseMs: number, from: readonly StoredRunStatus[]): Promise<RunRecord | undefined> {
    if (from.length === 0) return undefined;
    const now = Date.now();
    return this.driver.transaction(async (tx) => {
      const rows = await tx.query(
        `UPDATE runs SET status = 'running', owner = ?, lease_expires_at = ?, updated_at = ?, pending_interaction_id = NULL, epoch = epoch + 1
         WHERE id = ? AND status IN (${placeholders(from.length)}) AND (owner IS NULL OR owner = ? OR lease_expires_at < ?)
         RETURNING *`,
        [owner, now + leaseMs, now, runId, ...from, owner, now],
      );
      if (!rows[0]) return undefined;
      await this.transport.inTx(tx, { type: 'run', runId, status: 'running', owner });
      return toRunRecord(rows[0]);
    });
  }

  async claimOrphans(owner: string, leaseMs: number, limit: number, options: { exclude?: readonly string[] } = {}): Promise<RunRecord[]> {
    const now = Date.now();
    // Postgres: SKIP LOCKED lets several instances sweep at once without waiting on, or taking, the same rows.
    const lock = this.backend === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
    // Runs the caller drives already (its own lease ran out under load): claiming them again would fence its live loop out.
    const exclude = options.exclude?.length ? `AND id NOT IN (${placeholders(options.exclude.length)})` : '';
    return this.driver.transaction(async (tx) => {
      const rows = await tx.query(
        `UPDATE runs SET owner = ?, lease_expires_at = ?, updated_at = ?, epoch = epoch + 1
         WHERE id IN (SELECT id FROM runs WHERE status = 'running' AND (owner IS NULL OR lease_expires_at < ?) ${exclude} ORDER BY updated_at LIMIT ? ${lock})
         RETURNING *`,
        [owner, now + leaseMs, now, now, ...(options.exclude ?? []), limit],
      );
      for (const row of rows) await this.transport.inTx(tx, { type: 'run', runId: String(row.id), status: 'running', owner });
      return rows.map(toRunRecord);
    });
  }

  async renewLeases(owner: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    const kept: string[] = [];
    const until = Date.now() + leaseMs;
    // Rows are locked in id order (Postgres): two renewals, or a renewal and a claim sweep, never
    // lock the same runs in opposite orders (a deadlock aborts one of them).
    const ids = [...new Set(runIds)].sort();
    const lock = this.backend === 'postgres' ? 'ORDER BY id FOR UPDATE' : '';
    for (let start = 0; start < ids.length; start += 500) {
      const chunk = ids.slice(start, start + 500);
      const rows = await this.driver.query<{ id: string }>(
        `UPDATE runs SET lease_expires_at = ?
         WHERE id IN (SELECT id FROM runs WHERE owner = ? AND status = 'running' AND id IN (${placeholders(chunk.length)}) ${lock}) RETURNING id`,
        [until, owner, ...chunk],
      );
      kept.push(...rows.map((r) => String(r.id)));
    }
    return kept;
  }

  // The run's durable history

  async write(write: RunWrite): Promise<void> {
    await this.driver.transaction(async (tx) => {
      await this.fence(tx, write.runId, { owner: write.owner, epoch: write.epoch }, write.run);
      await this.applyWrite(tx, write);
    });
  }

  /**
   * Checks ownership — the owner and, when given, its claim (epoch) — and applies the run patch in
   * one statement (which also row-locks the run, so a concurrent claim waits for this write or
   * this write sees the claim).
   */
  private async fence(tx: SqlTx, runId: string, { owner, epoch }: RunFence, patch: RunWrite['run']): Promise<void> {
    const now = Date.now();
    const sets = ['updated_at = ?'];
    const params: SqlParam[] = [now];
    if (patch?.status !== undefined) {
      sets.push('status = ?');
      params.push(patch.status);
      if (FINISHED_STATUSES.includes(patch.status)) {
        sets.push('finished_at = ?');
        params.push(now);
      }
    }
    if (patch?.pendingInteractionId !== undefined) {
      sets.push('pending_interaction_id = ?');
      params.push(patch.pendingInteractionId);
    }
    if (patch?.finalText !== undefined) {
      sets.push('final_text = ?');
      params.push(patch.finalText);
    }
    if (patch?.error !== undefined) {
      sets.push('error = ?');
      params.push(patch.error === null ? null : JSON.stringify(patch.error));
    }
    if (patch?.release) sets.push('owner = NULL', 'lease_expires_at = NULL');
    const byClaim = epoch === undefined ? '' : ' AND epoch = ?';
    const changed = await tx.execute(`UPDATE runs SET ${sets.join(', ')} WHERE id = ? AND owner = ?${byClaim}`, [
      ...params,
      runId,
      owner,
      ...(epoch === undefined ? [] : [epoch]),
    ]);
    if (changed === 0) {
      const rows = await tx.query<{ owner: string | null; epoch: unknown }>('SELECT owner, epoch FROM runs WHERE id = ?', [runId]);
      if (!rows[0]) throw new RunNotFoundError(runId);
      throw new LeaseLostError(runId, owner, rows[0].owner, epoch === undefined ? undefined : { epoch, currentEpoch: num(rows[0].epoch) });
    }
    if (patch?.status !== undefined) await this.transport.inTx(tx, { type: 'run', runId, status: patch.status, owner: patch.release ? null : owner });
    if (patch?.closeInteractions !== undefined) await this.closeAllIn(tx, runId, patch.closeInteractions);
  }

  private async applyWrite(tx: SqlTx, write: RunWrite): Promise<void> {
    const { runId } = write;
    const now = Date.now();
    if (write.events?.length) await this.appendEvents(tx, runId, write.events);
    if (write.messages) {
      if (write.messages.replace) await tx.execute('DELETE FROM run_messages WHERE run_id = ?', [runId]);
      await tx.insertRows(
        'run_messages',
        ['run_id', 'idx', 'body'],
        write.messages.items.map((m, i) => [runId, write.messages!.from + i, JSON.stringify(m)]),
        'ON CONFLICT (run_id, idx) DO UPDATE SET body = excluded.body',
      );
    }
    if (write.toolHistory) {
      await tx.insertRows(
        'run_tool_history',
        ['run_id', 'idx', 'body'],
        write.toolHistory.items.map((m, i) => [runId, write.toolHistory!.from + i, JSON.stringify(m)]),
        'ON CONFLICT (run_id, idx) DO UPDATE SET body = excluded.body',
      );
    }
    if (write.toolIntent) {
      const { toolCallId, toolName, input } = write.toolIntent;
      // A call re-run after it was blocked on its first ask starts again from that same intent.
      await tx.execute(
        `INSERT INTO tool_calls (run_id, tool_call_id, tool_name, input, status, started_at) VALUES (?, ?, ?, ?, 'started', ?)
         ON CONFLICT (run_id, tool_call_id) DO UPDATE SET status = 'started', waiting = 0, started_at = excluded.started_at`,
        [runId, toolCallId, toolName, JSON.stringify(input ?? null), now],
      );
    }
    for (const { toolCallId, result } of write.toolResults ?? []) {
      await tx.execute(
        `UPDATE tool_calls SET status = 'completed', result = ?, waiting = 0, finished_at = ? WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`,
        [JSON.stringify(result), now, runId, toolCallId],
      );
    }
    for (const toolCallId of write.interruptedToolCalls ?? []) {
      await tx.execute(`UPDATE tool_calls SET status = 'interrupted', waiting = 0, finished_at = ? WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`, [
        now,
        runId,
        toolCallId,
      ]);
    }
    if (write.checkpoint) {
      const c = write.checkpoint;
      await tx.execute(
        `INSERT INTO run_checkpoints (run_id, format, seq, step, state, message_count, tool_history_count, compactions, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id) DO UPDATE SET format = excluded.format, seq = excluded.seq, step = excluded.step, state = excluded.state,
           message_count = excluded.message_count, tool_history_count = excluded.tool_history_count, compactions = excluded.compactions, updated_at = excluded.updated_at`,
        [runId, c.format, c.seq, c.step, JSON.stringify(c.state), c.messageCount, c.toolHistoryCount, c.compactions, now],
      );
    }
  }

  private async appendEvents(tx: SqlTx, runId: string, events: readonly RunEvent[]): Promise<void> {
    try {
      await tx.insertRows(
        'run_events',
        ['run_id', 'seq', 'type', 'at', 'data'],
        events.map((e) => [runId, e.seq, e.type, e.at, JSON.stringify(e.data)]),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw new EventSeqConflictError(runId, events[0]!.seq);
      throw error;
    }
    await this.transport.inTx(tx, { type: 'events', runId, seq: events[events.length - 1]!.seq });
  }

  async appendOrphanEvents(runId: string, make: (nextSeq: number) => RunEvent[], patch?: RunWrite['run']): Promise<RunEvent[]> {
    return this.driver.transaction(async (tx) => {
      const lock = this.backend === 'postgres' ? 'FOR UPDATE' : '';
      const rows = await tx.query(`SELECT * FROM runs WHERE id = ? ${lock}`, [runId]);
      if (!rows[0]) throw new RunNotFoundError(runId);
      const run = toRunRecord(rows[0]);
      if (run.owner && run.leaseExpiresAt && Date.parse(run.leaseExpiresAt) >= Date.now()) throw new RunBusyError(runId, run.owner, run.leaseExpiresAt);
      const last = await this.lastSeqIn(tx, runId);
      const events = make(last + 1);
      // Take the run for the length of this write (a claim: a late write of its last driver is refused).
      const marker = `orphan-writer:${process.pid}:${Date.now()}`;
      await tx.execute('UPDATE runs SET owner = ?, epoch = epoch + 1 WHERE id = ?', [marker, runId]);
      await this.fence(tx, runId, { owner: marker, epoch: run.epoch + 1 }, { ...patch, release: true });
      if (events.length) await this.appendEvents(tx, runId, events);
      return events;
    });
  }

  async readEvents(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<RunEvent[]> {
    const rows = await this.driver.query('SELECT seq, type, at, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?', [
      runId,
      options.afterSeq ?? 0,
      options.limit ?? 10_000,
    ]);
    return rows.map((row) => toEvent(row, runId));
  }

  lastEventSeq(runId: string): Promise<number> {
    return this.lastSeqIn(this.driver, runId);
  }

  private async lastSeqIn(on: SqlRunner, runId: string): Promise<number> {
    const rows = await on.query<{ seq: unknown }>('SELECT MAX(seq) AS seq FROM run_events WHERE run_id = ?', [runId]);
    return rows[0]?.seq === null || rows[0]?.seq === undefined ? 0 : num(rows[0].seq);
  }

  async loadCheckpoint(runId: string): Promise<LoadedCheckpoint | undefined> {
    const rows = await this.driver.query('SELECT * FROM run_checkpoints WHERE run_id = ?', [runId]);
    const row = rows[0];
    if (!row) return undefined;
    const format = num(row.format);
    if (format !== CHECKPOINT_FORMAT) throw new CheckpointFormatError(runId, format);
    const messageCount = num(row.message_count);
    const toolHistoryCount = num(row.tool_history_count);
    const [messages, toolHistory, lastSeq] = await Promise.all([
      this.driver.query<{ body: string }>('SELECT body FROM run_messages WHERE run_id = ? AND idx < ? ORDER BY idx', [runId, messageCount]),
      this.driver.query<{ body: string }>('SELECT body FROM run_tool_history WHERE run_id = ? AND idx < ? ORDER BY idx', [runId, toolHistoryCount]),
      this.lastEventSeq(runId),
    ]);
    return {
      checkpoint: {
        format: CHECKPOINT_FORMAT,
        seq: num(row.seq),
        step: num(row.step),
        state: JSON.parse(String(row.state)) as Record<string, unknown>,
        messageCount,
        toolHistoryCount,
        compactions: num(row.compactions),
      },
      messages: messages.map((m) => JSON.parse(m.body) as unknown),
      toolHistory: toolHistory.map((m) => JSON.parse(m.body) as unknown),
      lastSeq,
    };
  }

  async listToolCalls(runId: string): Promise<ToolCallRecord[]> {
    const rows = await this.driver.query('SELECT * FROM tool_calls WHERE run_id = ? ORDER BY started_at, tool_call_id', [runId]);
    return rows.map(toToolCall);
  }

  // Interactions

  async saveInteraction(
    request: InteractionRequest,
    fence?: RunFence & { events: readonly RunEvent[] },
  ): Promise<(PriorOutcome & { announce?: boolean }) | undefined> {
    return this.driver.transaction(async (tx) => {
      if (fence) {
        await this.fence(tx, request.runId, fence, undefined);
        if (fence.events.length) await this.appendEvents(tx, request.runId, fence.events);
      }
      const lock = this.backend === 'postgres' ? 'FOR UPDATE' : '';
      const rows = await tx.query(`SELECT * FROM interactions WHERE id = ? ${lock}`, [request.id]);
      const now = Date.now();
      if (!rows[0]) {
        await tx.execute(
          `INSERT INTO interactions (id, run_id, tool_call_id, kind, status, request, expires_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
          [request.id, request.runId, request.toolCallId ?? null, request.kind, JSON.stringify(request), request.expiresAt ? Date.parse(request.expiresAt) : null, now],
        );
        await this.markWaiting(tx, request);
        await this.transport.inTx(tx, { type: 'interaction', runId: request.runId, interactionId: request.id, status: 'pending' });
        return undefined;
      }
      let record = toInteraction(rows[0]);
      if (record.status === 'pending' && record.expiresAt && Date.parse(record.expiresAt) <= now) {
        record = await this.expireOne(tx, record, now);
      }
      if (record.status === 'pending') {
        await this.markWaiting(tx, record.request);
        return { status: 'pending', request: record.request };
      }
      // The outcome reaches running code now: from here on, re-running the tool would repeat what follows the ask.
      const announce = !record.consumed;
      if (announce) {
        await tx.execute('UPDATE interactions SET consumed = 1 WHERE id = ?', [record.id]);
        await this.markPassedAsk(tx, record.request);
      }
      if (record.status === 'answered') return { status: 'answered', request: record.request, response: record.response!, announce };
      return { status: record.status, request: record.request, reason: record.reason ?? record.status, announce };
    });
  }

  private async markWaiting(tx: SqlTx, request: InteractionRequest): Promise<void> {
    if (!request.toolCallId) return;
    await tx.execute(`UPDATE tool_calls SET waiting = 1 WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`, [request.runId, request.toolCallId]);
  }

  private async markPassedAsk(tx: SqlTx, request: InteractionRequest): Promise<void> {
    if (!request.toolCallId) return;
    await tx.execute(`UPDATE tool_calls SET waiting = 0, passed_ask = 1 WHERE run_id = ? AND tool_call_id = ? AND status = 'started'`, [
      request.runId,
      request.toolCallId,
    ]);
  }

  async claimAnswer(interactionId: string, response: InteractionResponse, options: { consumed?: boolean; fence?: RunFence } = {}): Promise<InteractionRecord> {
    const outcome = await this.driver.transaction(async (tx) => {
      if (options.fence) await this.fenceInteraction(tx, interactionId, options.fence);
      const now = Date.now();
      // The compare-and-set: of concurrent answers, exactly one finds the row still pending.
      const rows = await tx.query(
        `UPDATE interactions SET status = 'answered', response = ?, answered_by = ?, answered_at = ?, closed_at = ?, consumed = ?
         WHERE id = ? AND status = 'pending' AND (expires_at IS NULL OR expires_at > ?) RETURNING *`,
        [JSON.stringify(response), response.userId ?? null, response.respondedAt, now, options.consumed ? 1 : 0, interactionId, now],
      );
      if (rows[0]) {
        const record = toInteraction(rows[0]);
        if (options.consumed) await this.markPassedAsk(tx, record.request);
        await this.transport.inTx(tx, { type: 'interaction', runId: record.runId, interactionId, status: 'answered' });
        return record;
      }
      const existing = await tx.query('SELECT * FROM interactions WHERE id = ?', [interactionId]);
      if (!existing[0]) throw new InteractionNotFoundError(interactionId);
      let record = toInteraction(existing[0]);
      // Pending but past its deadline: expire it now (and commit that) before refusing the answer.
      if (record.status === 'pending') record = await this.expireOne(tx, record, now);
      return { refused: record };
    });
    if ('refused' in outcome) refuse(outcome.refused);
    return outcome;
  }

  private async expireOne(tx: SqlTx, record: InteractionRecord, now: number): Promise<InteractionRecord> {
    // Measured from when the request was asked (a resumed ask keeps its first deadline).
    const seconds = record.expiresAt ? Math.max(0, Math.round((Date.parse(record.expiresAt) - Date.parse(record.request.createdAt)) / 100) / 10) : 0;
    const reason = `no one answered within ${seconds} s`;
    await tx.execute(`UPDATE interactions SET status = 'expired', reason = ?, closed_at = ? WHERE id = ? AND status = 'pending'`, [reason, now, record.id]);
    await this.transport.inTx(tx, { type: 'interaction', runId: record.runId, interactionId: record.id, status: 'expired' });
    return { ...record, status: 'expired', reason, closedAt: new Date(now).toISOString() };
  }

  async closeInteraction(interactionId: string, status: 'expired' | 'cancelled', reason: string, fence?: RunFence): Promise<boolean> {
    return this.driver.transaction(async (tx) => {
      if (fence) await this.fenceInteraction(tx, interactionId, fence);
      const rows = await tx.query<{ run_id: string }>(
        `UPDATE interactions SET status = ?, reason = ?, closed_at = ? WHERE id = ? AND status = 'pending' RETURNING run_id`,
        [status, reason, Date.now(), interactionId],
      );
      if (!rows[0]) return false;
      await this.transport.inTx(tx, { type: 'interaction', runId: String(rows[0].run_id), interactionId, status });
      return true;
    });
  }

  async closeRunInteractions(runId: string, reason: string): Promise<string[]> {
    return this.driver.transaction((tx) => this.closeAllIn(tx, runId, reason));
  }

  private async closeAllIn(tx: SqlTx, runId: string, reason: string): Promise<string[]> {
    const rows = await tx.query<{ id: string }>(
      `UPDATE interactions SET status = 'cancelled', reason = ?, closed_at = ? WHERE run_id = ? AND status = 'pending' RETURNING id`,
      [reason, Date.now(), runId],
    );
    for (const row of rows) await this.transport.inTx(tx, { type: 'interaction', runId, interactionId: String(row.id), status: 'cancelled' });
    return rows.map((r) => String(r.id));
  }

  /** Fences a write to an interaction by its run's current claim. */
  private async fenceInteraction(tx: SqlTx, interactionId: string, fence: RunFence): Promise<void> {
    const rows = await tx.query<{ run_id: string }>('SELECT run_id FROM interactions WHERE id = ?', [interactionId]);
    if (!rows[0]) throw new InteractionNotFoundError(interactionId);
    await this.fence(tx, String(rows[0].run_id), fence, undefined);
  }

  async expireDue(now = new Date()): Promise<InteractionRecord[]> {
    const due = await this.driver.query(`SELECT * FROM interactions WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT 1000`, [
      now.getTime(),
    ]);
    if (due.length === 0) return [];
    return this.driver.transaction(async (tx) => {
      const expired: InteractionRecord[] = [];
      for (const row of due) {
        const record = toInteraction(row);
        const changed = await tx.query(`SELECT status FROM interactions WHERE id = ? AND status = 'pending'`, [record.id]);
        if (changed.length === 0) continue; // answered or closed meanwhile
        expired.push(await this.expireOne(tx, record, now.getTime()));
      }
      return expired;
    });
  }

  async getInteraction(interactionId: string): Promise<InteractionRecord | undefined> {
    const rows = await this.driver.query('SELECT * FROM interactions WHERE id = ?', [interactionId]);
    return rows[0] ? toInteraction(rows[0]) : undefined;
  }

  async listInteractions(query: InteractionQuery = {}): Promise<InteractionRecord[]> {
    if (query.ids) {
      if (query.ids.length === 0) return [];
      // Many ids (a runner with thousands of waiting runs): a primary-key lookup per chunk.
      if (query.ids.length > 500) {
        const out: InteractionRecord[] = [];
        for (let start = 0; start < query.ids.length; start += 500) out.push(...(await this.listInteractions({ ...query, ids: query.ids.slice(start, start + 500) })));
        return out.slice(0, query.limit ?? out.length);
      }
    }
    const where: string[] = [];
    const params: SqlParam[] = [];
    if (query.ids) {
      where.push(`i.id IN (${placeholders(query.ids.length)})`);
      params.push(...query.ids);
    }
    if (query.runId) {
      where.push('i.run_id = ?');
      params.push(query.runId);
    }
    if (query.status?.length) {
      where.push(`i.status IN (${placeholders(query.status.length)})`);
      params.push(...query.status);
    }
    if (query.userId) {
      where.push('r.user_id = ?');
      params.push(query.userId);
    }
    params.push(query.limit ?? (query.ids ? query.ids.length : 100));
    const rows = await this.driver.query(
      `SELECT i.* FROM interactions i ${query.userId ? 'JOIN runs r ON r.id = i.run_id' : ''}
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY i.created_at DESC, i.id DESC LIMIT ?`,
      params,
    );
    return rows.map(toInteraction);
  }

  // Per-user permissions and the audit log

  async listUserPermissions(userId: string): Promise<UserPermissionRecord[]> {
    const rows = await this.driver.query('SELECT * FROM user_permissions WHERE user_id = ? ORDER BY created_at, rule', [userId]);
    return rows.map(toPermission);
  }

  async addUserPermission(record: Omit<UserPermissionRecord, 'createdAt'> & { createdAt?: string }): Promise<void> {
    await this.driver.execute(
      'INSERT INTO user_permissions (user_id, rule, behavior, created_at, created_by) VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, rule, behavior) DO NOTHING',
      [record.userId, record.rule, record.behavior, record.createdAt ? Date.parse(record.createdAt) : Date.now(), record.createdBy ?? null],
    );
  }

  async removeUserPermission(userId: string, rule: string, behavior?: 'allow' | 'deny'): Promise<number> {
    if (behavior) return this.driver.execute('DELETE FROM user_permissions WHERE user_id = ? AND rule = ? AND behavior = ?', [userId, rule, behavior]);
    return this.driver.execute('DELETE FROM user_permissions WHERE user_id = ? AND rule = ?', [userId, rule]);
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    await this.driver.execute(
      'INSERT INTO audit_log (at, run_id, user_id, tool_call_id, tool_name, behavior, reason, source, rule, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
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
      ],
    );
  }

  async listAudit(query: AuditQuery = {}): Promise<AuditEntry[]> {
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
    params.push(query.limit ?? 1000);
    const rows = await this.driver.query(`SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT ?`, params);
    return rows.map(toAudit);
  }

  // Notifications

  async subscribe(target: string, fn: (notification: StoreNotification) => void): Promise<Unsubscribe> {
    await this.transport.listen();
    const remove = this.hub.add(target, fn);
    return async () => remove();
  }

  publish(notification: StoreNotification): Promise<void> {
    return this.transport.publish(notification);
  }

  async dataVersion(): Promise<number | undefined> {
    return this.driver.dataVersion?.();
  }

  // Retention

  async prune(options: { olderThan: Date }): Promise<PruneResult> {
    return this.driver.transaction(async (tx) => {
      const finished = FINISHED_STATUSES;
      const select = `SELECT id FROM runs WHERE status IN (${placeholders(finished.length)}) AND updated_at < ?`;
      const params: SqlParam[] = [...finished, options.olderThan.getTime()];
      const events = await tx.execute(`DELETE FROM run_events WHERE run_id IN (${select})`, params);
      for (const table of ['run_checkpoints', 'run_messages', 'run_tool_history', 'tool_calls', 'interactions']) {
        await tx.execute(`DELETE FROM ${table} WHERE run_id IN (${select})`, params);
      }
      const runs = await tx.execute(`DELETE FROM runs WHERE id IN (${select})`, params);
      return { runs, events };
    });
  }

  async schemaVersion(): Promise<number> {
    const rows = await this.driver.query<{ value: string }>("SELECT value FROM sage_meta WHERE key = 'schema_version'");
    return rows[0] ? Number(rows[0].value) : 0;
  }

  async close(): Promise<void> {
    await this.transport.close();
    await this.driver.close();
  }
}

/** Why an answer was refused, as the typed error a caller switches on. */
function refuse(record: InteractionRecord): never {
  switch (record.status) {
    case 'answered':
      throw new InteractionAlreadyAnsweredError(record.id, record.answeredBy ?? undefined, record.answeredAt ?? undefined);
    case 'expired':
      throw new InteractionExpiredError(record.id, record.expiresAt ?? undefined);
    case 'cancelled':
      throw new InteractionCancelledError(record.id, record.reason ?? 'cancelled');
    default:
      throw new InteractionNotFoundError(record.id);
  }
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
