import type { InteractionRequest, InteractionResponse } from '../interaction/index.js';
import type { AuditEntry, InteractionRecord, QueuedChatMessage, RunRecord, StoredRunStatus, ToolCallRecord, UserPermissionRecord } from './types.js';
import type { Row } from './sql/driver.js';
import { TextPool } from '../text-pool/index.js';

/** Row ↔ record mapping shared by both dialects. Postgres returns BIGINT as a string, hence num(). */

export const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value));
const iso = (ms: unknown): string => new Date(num(ms)).toISOString();
const isoOrNull = (ms: unknown): string | null => (ms === null || ms === undefined ? null : iso(ms));
const json = <T>(text: unknown): T => JSON.parse(String(text)) as T;
const jsonOrNull = <T>(text: unknown): T | null => (text === null || text === undefined ? null : json<T>(text));
const strOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/**
 * System prompts already read: runs started alike (a server's chats: same cwd, tools and day) store
 * the same ~4 KB prompt in their options, and a live run keeps the one its row was parsed into.
 */
const systemPrompts = new TextPool();

function runOptions(text: unknown): Record<string, unknown> {
  const options = json<Record<string, unknown>>(text);
  const system = options['system'];
  if (typeof system === 'string') options['system'] = systemPrompts.share(system);
  return options;
}

export function toRunRecord(row: Row): RunRecord {
  return {
    id: String(row.id),
    status: row.status as StoredRunStatus,
    userId: String(row.user_id),
    sessionId: String(row.session_id),
    channel: String(row.channel),
    task: String(row.task),
    options: runOptions(row.options),
    owner: strOrNull(row.owner),
    epoch: row.epoch === undefined || row.epoch === null ? 0 : num(row.epoch),
    leaseExpiresAt: isoOrNull(row.lease_expires_at),
    pendingInteractionId: strOrNull(row.pending_interaction_id),
    finalText: strOrNull(row.final_text),
    error: jsonOrNull(row.error),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    finishedAt: isoOrNull(row.finished_at),
  };
}

export function toToolCall(row: Row): ToolCallRecord {
  return {
    runId: String(row.run_id),
    toolCallId: String(row.tool_call_id),
    toolName: String(row.tool_name),
    input: json(row.input),
    status: row.status as ToolCallRecord['status'],
    waiting: num(row.waiting) === 1,
    passedAsk: num(row.passed_ask) === 1,
    result: jsonOrNull(row.result),
    startedAt: iso(row.started_at),
    finishedAt: isoOrNull(row.finished_at),
  };
}

export function toInteraction(row: Row): InteractionRecord {
  const request = json<InteractionRequest>(row.request);
  return {
    id: String(row.id),
    runId: String(row.run_id),
    toolCallId: strOrNull(row.tool_call_id),
    kind: request.kind,
    status: row.status as InteractionRecord['status'],
    request,
    response: jsonOrNull<InteractionResponse>(row.response),
    answeredBy: strOrNull(row.answered_by),
    answeredAt: strOrNull(row.answered_at),
    reason: strOrNull(row.reason),
    expiresAt: isoOrNull(row.expires_at),
    createdAt: iso(row.created_at),
    closedAt: isoOrNull(row.closed_at),
    consumed: num(row.consumed) === 1,
  };
}

export function toPermission(row: Row): UserPermissionRecord {
  return {
    userId: String(row.user_id),
    rule: String(row.rule),
    behavior: row.behavior as UserPermissionRecord['behavior'],
    createdAt: iso(row.created_at),
    createdBy: strOrNull(row.created_by),
  };
}

export function toAudit(row: Row): AuditEntry {
  return {
    at: iso(row.at),
    runId: strOrNull(row.run_id),
    userId: strOrNull(row.user_id),
    toolCallId: strOrNull(row.tool_call_id),
    toolName: strOrNull(row.tool_name),
    behavior: row.behavior as AuditEntry['behavior'],
    reason: String(row.reason),
    source: String(row.source),
    rule: strOrNull(row.rule),
    data: jsonOrNull(row.data),
  };
}

export function toQueuedChatMessage(row: Row): QueuedChatMessage {
  return {
    seq: num(row.seq),
    sessionKey: String(row.session_key),
    message: json(row.message),
    reservedFor: strOrNull(row.reserved_for),
    queuedAt: iso(row.queued_at),
  };
}
