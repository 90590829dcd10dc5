import type { AppDeps } from './app-env.js';
import { followRunEvents } from './event-feed.js';
import { sseResponse } from './sse.js';

/** The SSE response for a run's events after `afterSeq`, registered so a shutdown can end it. */
export function eventStream(deps: AppDeps, runId: string, afterSeq: number, headers?: Record<string, string>): Response {
  let untrack: (() => void) | undefined;
  return sseResponse(
    (signal) => {
      const local = new AbortController();
      signal.addEventListener('abort', () => local.abort(), { once: true });
      untrack = deps.trackStream(() => local.abort());
      return followRunEvents(deps.store, runId, afterSeq, local.signal);
    },
    {
      headers,
      onClose: () => untrack?.(),
      onError: (error) => deps.logger.error({ err: error, runId }, 'event stream failed'),
    },
  );
}
