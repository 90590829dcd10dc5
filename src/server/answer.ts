import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  InvalidResponseError,
  validateResponse,
  type InteractionResponse,
} from '../interaction/index.js';
import type { InteractionRecord, RunRecord } from '../store/index.js';
import type { Principal } from './auth.js';
import { assertProjectRuleAllowed } from './project-rules.js';
import type { RunDriver } from './run-driver.js';

/** Refuses an answer to a request that is no longer open, saying why (who answered and when). */
export function assertOpen(record: InteractionRecord, now = Date.now()): void {
  switch (record.status) {
    case 'answered':
      throw new InteractionAlreadyAnsweredError(record.id, record.answeredBy ?? undefined, record.answeredAt ?? undefined);
    case 'expired':
      throw new InteractionExpiredError(record.id, record.expiresAt ?? record.closedAt ?? undefined);
    case 'cancelled':
      throw new InteractionCancelledError(record.id, record.reason ?? 'cancelled');
    case 'pending':
      // The expiry sweep may not have run yet; an answer after the deadline is refused all the same.
      if (record.expiresAt && Date.parse(record.expiresAt) <= now) throw new InteractionExpiredError(record.id, record.expiresAt);
  }
}

/**
 * Refuses an answer whose `rule` ("always allow …") is not one of the rules the request suggested:
 * the suggestions cover exactly the call being answered and nothing broader, so a client cannot
 * turn one approval into `Bash` or any rule of its choosing.
 */
export function assertRuleOffered(record: InteractionRecord, response: Pick<InteractionResponse, 'rule'>): void {
  if (response.rule === undefined) return;
  const offered = record.request.kind === 'confirm' ? (record.request.suggestions ?? []).map((s) => s.rule) : [];
  if (offered.includes(response.rule)) return;
  throw new InvalidResponseError(
    record.id,
    offered.length > 0
      ? `"rule" must be one of the rules this request suggests (${offered.join(', ')}), which cover exactly the call being approved.`
      : 'This request suggests no rule to remember; leave "rule" out (answer once, or remember the approval for the session).',
    'rule',
  );
}

/**
 * Answers an interaction as `principal`: the answer is checked against its request (400 naming the
 * field; an "always" rule must be one the request suggested), stamped with who answered and when
 * (a client cannot answer in someone else's name); with its `run`, an "always, this project" answer
 * is checked against who may save one there (project-rules.ts); then it is handed to the driver, which claims it
 * exactly once and resumes the run.
 */
export async function answerInteraction(driver: RunDriver, principal: Principal, record: InteractionRecord, raw: Record<string, unknown>, run?: RunRecord): Promise<InteractionRecord> {
  assertOpen(record);
  const response = validateResponse(record.request, {
    ...raw,
    requestId: raw['requestId'] ?? record.id,
    userId: principal.userId,
    // Answers through the HTTP API come from the web surface, whatever the body claims.
    channel: 'web',
    respondedAt: new Date().toISOString(),
  });
  // Checked before the answer is claimed: a refused rule stores nothing and the run keeps waiting.
  assertRuleOffered(record, response);
  if (run) assertProjectRuleAllowed(driver.serverPolicy, principal, run, response);
  return driver.respond(record.id, response, record);
}
