import { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app-env.js';
import { InvalidInputError } from '../../errors/index.js';
import { sseResponse, wantsEventStream } from '../sse.js';
import { followUserEvents, formatUserEvent } from '../user-event-feed.js';

/**
 * GET /events: the caller's run status changes and interactions requested, answered or closed, as
 * SSE (an admin's: everyone's). The web UI's lists and inbox follow it instead of polling. It counts
 * against the per-user stream limit like a run's stream.
 */
export function userEventRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/events', (c) => {
    if (!wantsEventStream(c.req.header('accept'))) throw new InvalidInputError('GET /events is an event stream: send Accept: text/event-stream.');
    const principal = c.get('principal');
    const slot = c.get('streamSlot');
    if (slot) slot.claimed = true;
    let untrack: (() => void) | undefined;
    return sseResponse(
      (signal) => {
        const local = new AbortController();
        signal.addEventListener('abort', () => local.abort(), { once: true });
        untrack = deps.trackStream(() => local.abort());
        return followUserEvents(deps.store, principal, local.signal);
      },
      {
        format: formatUserEvent,
        onClose: () => {
          untrack?.();
          slot?.release();
        },
        onError: (error) => deps.logger.error({ err: error, userId: principal.userId }, 'user event stream failed'),
      },
    );
  });
  return app;
}
