import type { InteractionRequest } from '../interaction/index.js';
import type { InteractionRecord, RunRecord } from './types.js';

/**
 * The loop's ask for the person's next message (a text-only answer in interactive mode). While it
 * is pending, the run is `idle`: done with what it was asked, nothing to approve.
 */
export function isNextMessageRequest(request: Pick<InteractionRequest, 'kind' | 'metadata'>): boolean {
  return request.kind === 'input' && request.metadata?.['purpose'] === 'next-message';
}

/** What a waiting run needs from a person: an approval, an answer to a question, or its next message. */
export type WaitingFor = 'approval' | 'question' | 'message';

/**
 * Derived from the run and the request it waits for (`pendingInteractionId`): `null` when the run
 * waits for nobody (working, or finished) or the request is no longer pending.
 */
export function waitingFor(run: Pick<RunRecord, 'pendingInteractionId'>, pending: InteractionRecord | undefined): WaitingFor | null {
  if (!run.pendingInteractionId || !pending || pending.id !== run.pendingInteractionId || pending.status !== 'pending') return null;
  if (isNextMessageRequest(pending.request)) return 'message';
  return pending.kind === 'confirm' ? 'approval' : 'question';
}
