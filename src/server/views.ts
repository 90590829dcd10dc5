import { waitingFor, type AuditEntry, type InteractionRecord, type RunRecord, type Store, type UserPermissionRecord } from '../store/index.js';
import type { AskContext } from '../runtime/ask-context.js';
import type { InteractionView, RunView } from './schemas.js';

/**
 * What the API shows of a run: the record without the runner's internals (owner, lease, options),
 * and what it waits for, derived from the request the store names (`pendingInteractionId`, written
 * in the same transaction as the request itself).
 */
export function runView(run: RunRecord, pending?: InteractionRecord): RunView {
  const model = run.options['model'];
  return {
    id: run.id,
    status: run.status,
    waitingFor: waitingFor(run, pending),
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

/** Views of runs, with the requests they name read in one query. */
export async function runViews(store: Store, runs: readonly RunRecord[]): Promise<RunView[]> {
  const ids = runs.flatMap((r) => (r.pendingInteractionId ? [r.pendingInteractionId] : []));
  const pending = ids.length ? await store.listInteractions({ ids }) : [];
  const byId = new Map(pending.map((i) => [i.id, i]));
  return runs.map((run) => runView(run, run.pendingInteractionId ? byId.get(run.pendingInteractionId) : undefined));
}

export async function oneRunView(store: Store, run: RunRecord): Promise<RunView> {
  return (await runViews(store, [run]))[0]!;
}

/** An interaction with the user it belongs to (its run's owner). */
export function interactionView(record: InteractionRecord, userId: string, context?: AskContext): InteractionView {
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
    ...(context ? { context } : {}),
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
