import type { AuditEntry, InteractionRecord, RunRecord, UserPermissionRecord } from '../store/index.js';
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
