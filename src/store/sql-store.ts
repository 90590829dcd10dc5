import type { RunEvent } from '../events/index.js';
import type { InteractionRequest, InteractionResponse, PriorOutcome } from '../interaction/index.js';
import type { NotificationHub } from './notification-hub.js';
import * as channelSeenIds from './queries/channel-seen-ids.js';
import * as chatQueue from './queries/chat-queue.js';
import type { SqlContext } from './queries/context.js';
import * as idPrefix from './queries/id-prefix.js';
import * as interactions from './queries/interactions.js';
import * as maintenance from './queries/maintenance.js';
import * as owners from './queries/owners.js';
import * as permissions from './queries/permissions.js';
import * as runWrite from './queries/run-write.js';
import * as runs from './queries/runs.js';
import * as writes from './queries/writes.js';
import type { SqlDriver } from './sql/driver.js';
import { storeFault, type StoreHealthReport } from './store-faults.js';
import type { NotificationTransport } from './sql/notification-transport.js';
import {
  STORE_SPECIFICATION_VERSION,
  type AuditEntry,
  type ClaimAnswerOptions,
  type AuditQuery,
  type InteractionQuery,
  type InteractionRecord,
  type LoadedCheckpoint,
  type NewRun,
  type PruneResult,
  type QueuedChatMessage,
  type RunFence,
  type StepWrite,
  type RunQuery,
  type RunResumeState,
  type RunOwnerRecord,
  type RunRecord,
  type RunWrite,
  type Store,
  type StoredRunStatus,
  type StoreNotification,
  type ToolCallRecord,
  type Unsubscribe,
  type UserPermissionRecord,
} from './types.js';

export type { NotificationTransport } from './sql/notification-transport.js';

/**
 * The Store over SQL, shared by the SQLite and Postgres backends: the same statements, the same
 * compare-and-set semantics, one contract test suite. Dialect differences are few and marked.
 * This class only composes; the statements live by concern in `queries/` (runs and leases, writes
 * and events, interactions, permissions and audit; `fence.ts` is the ownership check they share).
 */
export class SqlStore implements Store {
  readonly specificationVersion = STORE_SPECIFICATION_VERSION;
  readonly backend: 'sqlite' | 'postgres';
  readonly location: string;
  private readonly ctx: SqlContext;

  constructor(
    readonly driver: SqlDriver,
    private readonly hub: NotificationHub,
    private readonly transport: NotificationTransport,
  ) {
    this.backend = driver.dialect;
    this.location = driver.location;
    this.ctx = { driver, transport };
  }

  // Runs and leases

  createRun(run: NewRun, owner: { id: string; leaseMs: number } | null): Promise<RunRecord> {
    return runs.createRun(this.ctx, run, owner);
  }

  getRun(runId: string): Promise<RunRecord | undefined> {
    return runs.getRun(this.ctx, runId);
  }

  listRuns(query: RunQuery = {}): Promise<RunRecord[]> {
    return runs.listRuns(this.ctx, query);
  }

  findRunIds(prefix: string, limit: number): Promise<string[]> {
    return idPrefix.findRunIds(this.ctx, prefix, limit);
  }

  countRuns(query: RunQuery & { limit: number }): Promise<number> {
    return runs.countRuns(this.ctx, query);
  }

  claimRun(runId: string, owner: string, leaseMs: number, from: readonly StoredRunStatus[]): Promise<RunRecord | undefined> {
    return runs.claimRun(this.ctx, runId, owner, leaseMs, from);
  }

  claimOrphans(owner: string, leaseMs: number, limit: number, options: { exclude?: readonly string[] } = {}): Promise<RunRecord[]> {
    return runs.claimOrphans(this.ctx, owner, leaseMs, limit, options);
  }

  renewLeases(owner: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    return runs.renewLeases(this.ctx, owner, runIds, leaseMs);
  }

  registerOwner(record: RunOwnerRecord): Promise<void> {
    return owners.registerOwner(this.ctx, record);
  }

  forgetOwner(owner: string): Promise<void> {
    return owners.forgetOwner(this.ctx, owner);
  }

  getOwners(ids: readonly string[]): Promise<RunOwnerRecord[]> {
    return owners.getOwners(this.ctx, ids);
  }

  listOwnersOnHost(host: string): Promise<RunOwnerRecord[]> {
    return owners.listOwnersOnHost(this.ctx, host);
  }

  expireOwner(owner: string): Promise<string[]> {
    return owners.expireOwner(this.ctx, owner);
  }

  listWakeableRuns(limit: number): Promise<RunRecord[]> {
    return maintenance.listWakeableRuns(this.ctx, limit);
  }

  listOrphanCandidates(now: number, limit: number): Promise<string[]> {
    return maintenance.listOrphanCandidates(this.ctx, now, limit);
  }

  prune(options: { olderThan: Date }): Promise<PruneResult> {
    return runs.prune(this.ctx, options);
  }

  // Writes and events: the run's durable history

  write(write: RunWrite): Promise<void> {
    return runWrite.write(this.ctx, write);
  }

  appendOrphanEvents(runId: string, make: (nextSeq: number) => RunEvent[], patch?: RunWrite['run']): Promise<RunEvent[]> {
    return writes.appendOrphanEvents(this.ctx, runId, make, patch);
  }

  readEvents(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<RunEvent[]> {
    return writes.readEvents(this.ctx, runId, options);
  }

  lastEventSeq(runId: string): Promise<number> {
    return writes.lastSeqIn(this.driver, runId);
  }

  loadCheckpoint(runId: string): Promise<LoadedCheckpoint | undefined> {
    return writes.loadCheckpoint(this.ctx, runId);
  }

  listToolCalls(runId: string, options?: { unfinished?: boolean }): Promise<ToolCallRecord[]> {
    return writes.listToolCalls(this.ctx, runId, options);
  }

  loadRunForResume(runId: string): Promise<RunResumeState | undefined> {
    return writes.loadRunForResume(this.ctx, runId);
  }

  // Interactions

  saveInteraction(request: InteractionRequest, fence?: RunFence & { events: readonly RunEvent[]; step?: StepWrite }): Promise<(PriorOutcome & { announce?: boolean }) | undefined> {
    return interactions.saveInteraction(this.ctx, request, fence);
  }

  claimAnswer(interactionId: string, response: InteractionResponse, options: ClaimAnswerOptions = {}): Promise<InteractionRecord & { claimedRun?: RunRecord }> {
    return interactions.claimAnswer(this.ctx, interactionId, response, options);
  }

  closeInteraction(interactionId: string, status: 'expired' | 'cancelled', reason: string, fence?: RunFence): Promise<boolean> {
    return interactions.closeInteraction(this.ctx, interactionId, status, reason, fence);
  }

  closeRunInteractions(runId: string, reason: string): Promise<string[]> {
    return interactions.closeRunInteractions(this.ctx, runId, reason);
  }

  expireDue(now = new Date()): Promise<InteractionRecord[]> {
    return interactions.expireDue(this.ctx, now);
  }

  getInteraction(interactionId: string): Promise<InteractionRecord | undefined> {
    return interactions.getInteraction(this.ctx, interactionId);
  }

  listInteractions(query: InteractionQuery = {}): Promise<InteractionRecord[]> {
    return interactions.listInteractions(this.ctx, query);
  }

  findInteractionIds(prefix: string, limit: number): Promise<string[]> {
    return idPrefix.findInteractionIds(this.ctx, prefix, limit);
  }

  countInteractions(query: Pick<InteractionQuery, 'runId' | 'status' | 'userId'> & { limit: number }): Promise<number> {
    return interactions.countInteractions(this.ctx, query);
  }

  // Per-user permissions and the audit log

  listUserPermissions(userId: string): Promise<UserPermissionRecord[]> {
    return permissions.listUserPermissions(this.ctx, userId);
  }

  addUserPermission(record: Omit<UserPermissionRecord, 'createdAt'> & { createdAt?: string }): Promise<void> {
    return permissions.addUserPermission(this.ctx, record);
  }

  removeUserPermission(userId: string, rule: string, behavior?: 'allow' | 'deny'): Promise<number> {
    return permissions.removeUserPermission(this.ctx, userId, rule, behavior);
  }

  appendAudit(entry: AuditEntry): Promise<void> {
    return permissions.appendAudit(this.ctx, entry);
  }

  listAudit(query: AuditQuery = {}): Promise<AuditEntry[]> {
    return permissions.listAudit(this.ctx, query);
  }

  // The chat queue (channels)

  queueChatMessage(sessionKey: string, message: Record<string, unknown>): Promise<QueuedChatMessage> {
    return chatQueue.queueChatMessage(this.ctx, sessionKey, message);
  }

  listChatQueue(query: { sessionKey?: string } = {}): Promise<QueuedChatMessage[]> {
    return chatQueue.listChatQueue(this.ctx, query);
  }

  reserveChatQueue(sessionKey: string, token: string): Promise<QueuedChatMessage[]> {
    return chatQueue.reserveChatQueue(this.ctx, sessionKey, token);
  }

  settleChatQueue(token: string, outcome: 'delivered' | 'released'): Promise<number> {
    return chatQueue.settleChatQueue(this.ctx, token, outcome);
  }

  dropChatQueue(sessionKey: string): Promise<number> {
    return chatQueue.dropChatQueue(this.ctx, sessionKey);
  }

  // Seen inbound ids (channels)

  markChannelIdSeen(channel: string, id: string, expiresAt: number, now: number = Date.now()): Promise<boolean> {
    return channelSeenIds.markChannelIdSeen(this.ctx, channel, id, expiresAt, now);
  }

  forgetChannelId(channel: string, id: string): Promise<void> {
    return channelSeenIds.forgetChannelId(this.ctx, channel, id);
  }

  pruneChannelSeenIds(now: number = Date.now()): Promise<number> {
    return channelSeenIds.pruneChannelSeenIds(this.ctx, now);
  }

  // Notifications

  async subscribe(target: string, fn: (notification: StoreNotification) => void): Promise<Unsubscribe> {
    try {
      await this.transport.listen();
    } catch (error) {
      throw storeFault(error, this.location) ?? error;
    }
    const remove = this.hub.add(target, fn);
    return async () => remove();
  }

  publish(notification: StoreNotification): Promise<void> {
    return this.transport.publish(notification);
  }

  async dataVersion(): Promise<number | undefined> {
    return this.driver.dataVersion?.();
  }

  async schemaVersion(): Promise<number> {
    const rows = await this.driver.query<{ value: string }>("SELECT value FROM sage_meta WHERE key = 'schema_version'");
    return rows[0] ? Number(rows[0].value) : 0;
  }

  health(): StoreHealthReport {
    return this.driver.health?.report() ?? { status: 'ok' };
  }

  async ping(): Promise<void> {
    if (this.driver.ping) await this.driver.ping();
    else await this.schemaVersion();
    // A read works on a full disk; only a write shows there is room again. This one changes nothing
    // but still writes its page (neither database skips an update to the same value).
    if (this.driver.health?.report().status === 'disk_full') await this.driver.execute("UPDATE sage_meta SET value = value WHERE key = 'schema_version'");
  }

  async close(): Promise<void> {
    await this.transport.close();
    await this.driver.close();
  }
}
