import type { AppDeps } from './app-env.js';
import { followRunEvents } from './event-feed.js';
import { sseResponse } from './sse.js';
import type { StreamSlot } from '../runtime/user-limits.js';

export interface EventStreamOptions {
  headers?: Record<string, string>;
  /**
   * The caller's place in the per-user stream count (reserved by the app before the route ran):
   * the stream keeps it while open and releases it when it ends.
   */
  slot?: StreamSlot;
}

/** The SSE response for a run's events after `afterSeq`, registered so a shutdown can end it. */
export function eventStream(deps: AppDeps, runId: string, afterSeq: number, options: EventStreamOptions = {}): Response {
  let untrack: (() => void) | undefined;
  const { slot } = options;
  if (slot) slot.claimed = true;
  return sseResponse(
    (signal) => {
      const local = new AbortController();
      signal.addEventListener('abort', () => local.abort(), { once: true });
      untrack = deps.trackStream(() => local.abort());
      return followRunEvents(deps.store, runId, afterSeq, local.signal);
    },
    {
      headers: options.headers,
      onClose: () => {
        untrack?.();
        slot?.release();
      },
      onError: (error) => deps.logger.error({ err: error, runId }, 'event stream failed'),
    },
  );
}
