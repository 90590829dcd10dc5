import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  validateResponse,
} from '../interaction/index.js';
import type { InteractionRecord } from '../store/index.js';
import type { Principal } from './auth.js';
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
 * Answers an interaction as `principal`: the answer is checked against its request (400 naming the
 * field), stamped with who answered and when (a client cannot answer in someone else's name), then
 * handed to the driver, which claims it exactly once and resumes the run.
 */
export async function answerInteraction(driver: RunDriver, principal: Principal, record: InteractionRecord, raw: Record<string, unknown>): Promise<InteractionRecord> {
  assertOpen(record);
  const response = validateResponse(record.request, {
    ...raw,
    requestId: raw['requestId'] ?? record.id,
    userId: principal.userId,
    respondedAt: new Date().toISOString(),
  });
  return driver.respond(record.id, response);
}
