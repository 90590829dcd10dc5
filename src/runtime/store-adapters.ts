import type { AuditLog, AuditRecord } from '../permission/index.js';
import type { AuditEntry, Store } from '../store/index.js';
import { stageRunAudit } from '../durable/audit-routing.js';

const ANSWER_BEHAVIOR = { approved: 'allow', rejected: 'deny', timedOut: 'ask' } as const;

/**
 * The permission engine's audit trail written into the Store's audit log: with the run's own next
 * write when a runner of this process drives the run (stageRunAudit: no commit of its own before
 * the decision returns), else on its own.
 */
export function auditLogFromStore(store: Store): AuditLog {
  return {
    specificationVersion: 'v1',
    async append(record: AuditRecord) {
      const behavior = record.behavior ?? (record.answer ? ANSWER_BEHAVIOR[record.answer] : 'ask');
      const entry: AuditEntry = {
        at: new Date(record.at).toISOString(),
        runId: record.runId,
        userId: record.userId,
        toolCallId: record.toolCallId,
        toolName: record.toolName,
        behavior,
        reason: record.reason ?? (record.answer ? `the user's answer: ${record.answer}` : ''),
        source: record.source ?? (record.kind === 'answer' ? 'user' : 'default'),
        rule: record.rule ?? null,
        data: {
          kind: record.kind,
          inputHash: record.inputHash,
          sessionId: record.sessionId,
          ...(record.mode ? { mode: record.mode } : {}),
          ...(record.answer ? { answer: record.answer } : {}),
          ...(record.remember ? { remember: record.remember } : {}),
          ...(record.ruleSource ? { ruleSource: record.ruleSource } : {}),
          // What the person answered, in the keys the audit page reads.
          ...(record.kind === 'answer' && record.userId ? { answeredBy: record.userId } : {}),
          ...(record.channel ? { channel: record.channel } : {}),
          ...(record.message ? { message: record.message } : {}),
          ...(record.updatedInput !== undefined ? { updatedInput: record.updatedInput } : {}),
          ...(record.answers !== undefined ? { answers: record.answers } : {}),
        },
      };
      if (!stageRunAudit(store, entry)) await store.appendAudit(entry);
    },
    async query(filter = {}) {
      const entries = await store.listAudit({ runId: filter.runId, userId: filter.userId, limit: filter.limit });
      return entries.map((e) => ({
        at: Date.parse(e.at),
        kind: (e.data?.['kind'] as AuditRecord['kind']) ?? 'decision',
        runId: e.runId ?? '',
        sessionId: String(e.data?.['sessionId'] ?? ''),
        userId: e.userId ?? '',
        toolCallId: e.toolCallId ?? '',
        toolName: e.toolName ?? '',
        inputHash: String(e.data?.['inputHash'] ?? ''),
        behavior: e.behavior,
        reason: e.reason,
        ...(e.rule ? { rule: e.rule } : {}),
        ...(typeof e.data?.['answer'] === 'string' ? { answer: e.data['answer'] as AuditRecord['answer'] } : {}),
        ...(typeof e.data?.['channel'] === 'string' ? { channel: e.data['channel'] } : {}),
        ...(typeof e.data?.['message'] === 'string' ? { message: e.data['message'] } : {}),
        ...(e.data?.['updatedInput'] !== undefined ? { updatedInput: e.data['updatedInput'] } : {}),
        ...(e.data?.['answers'] !== undefined ? { answers: e.data['answers'] as AuditRecord['answers'] } : {}),
      }));
    },
  };
}
