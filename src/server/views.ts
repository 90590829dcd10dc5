import { FINISHED_STATUSES, type AuditEntry, type InteractionRecord, type RunRecord, type Store, type UserPermissionRecord } from '../store/index.js';
import type { InteractionView, RunView } from './schemas.js';

/** What the API shows of a run: the record without the runner's internals (owner, lease, options). */
export function runView(run: RunRecord): RunView {
  const model = run.options['model'];
  return {
    id: run.id,
    status: run.status,
    userId: run.userId,
    sessionId: run.sessionId,
    channel: run.channel,
    task: run.task,
    model: typeof model === 'string' ? model : null,
    pendingInteractionId: run.pendingInteractionId,
    finalText: run.finalText,
    error: run.error,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    finishedAt: run.finishedAt,
  };
}

/**
 * The run with `pendingInteractionId` filled in while it waits in memory: the store sets that
 * column only when a run is suspended (released), but a client asks "what is it waiting for" as
 * soon as the request exists. A run asks one thing at a time, so its newest pending request is it.
 */
export async function withPendingInteraction(store: Store, run: RunRecord): Promise<RunRecord> {
  if (run.pendingInteractionId || FINISHED_STATUSES.includes(run.status)) return run;
  const [pending] = await store.listInteractions({ runId: run.id, status: ['pending'], limit: 1 });
  return pending ? { ...run, pendingInteractionId: pending.id } : run;
}

export async function withPendingInteractions(store: Store, runs: readonly RunRecord[]): Promise<RunRecord[]> {
  return Promise.all(runs.map((run) => withPendingInteraction(store, run)));
}

/** An interaction with the user it belongs to (its run's owner). */
export function interactionView(record: InteractionRecord, userId: string): InteractionView {
  return {
    id: record.id,
    runId: record.runId,
    userId,
    kind: record.kind,
    status: record.status,
    request: record.request,
    response: record.response,
    answeredBy: record.answeredBy,
    answeredAt: record.answeredAt,
    reason: record.reason,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    closedAt: record.closedAt,
  };
}

export function permissionsView(userId: string, records: readonly UserPermissionRecord[]) {
  const pick = (behavior: 'allow' | 'deny') =>
    records.filter((r) => r.behavior === behavior).map((r) => ({ rule: r.rule, createdAt: r.createdAt, createdBy: r.createdBy }));
  return { userId, allow: pick('allow'), deny: pick('deny') };
}

export function auditView(entry: AuditEntry): AuditEntry {
  return entry;
}
