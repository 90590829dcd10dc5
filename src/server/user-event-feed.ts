import type { Store, StoreNotification } from '../store/index.js';
import type { Principal } from './auth.js';

/**
 * What the user stream (GET /events) tells a client: that one of its runs changed status or one of
 * its interactions was requested, answered or closed. Only ids and states: the client reads the
 * records through the ordinary routes, which apply their own access checks. `resync`: the store's
 * notification channel had a gap, so the client should reload what it shows.
 */
export type UserEvent =
  | { type: 'run'; runId: string; status: string }
  | { type: 'interaction'; runId: string; interactionId: string; status: string }
  | { type: 'resync' };

/** One SSE frame; there is no id: after a reconnect the client reloads its lists instead of replaying. */
export function formatUserEvent(event: UserEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The caller's run and interaction changes as the store announces them (an admin gets everyone's).
 * A run's owner is read once and remembered, so a busy run costs one lookup, not one per change.
 */
export async function* followUserEvents(store: Store, principal: Principal, signal: AbortSignal): AsyncGenerator<UserEvent> {
  const queue: StoreNotification[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = await store.subscribe('*', (n) => {
    if (n.type !== 'run' && n.type !== 'interaction' && n.type !== 'resync') return;
    // A client that stops reading must not grow this without bound: past this many, one resync says it all.
    if (queue.length >= 1_000) queue.splice(0, queue.length, { type: 'resync', runId: '*' });
    else queue.push(n);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort);
  const owners = new Map<string, string | null>();
  const ownerOf = async (runId: string): Promise<string | null> => {
    if (!owners.has(runId)) {
      if (owners.size > 10_000) owners.clear();
      owners.set(runId, (await store.getRun(runId))?.userId ?? null);
    }
    return owners.get(runId) ?? null;
  };
  const mine = async (runId: string) => principal.role === 'admin' || (await ownerOf(runId)) === principal.userId;
  try {
    while (!signal.aborted) {
      const n = queue.shift();
      if (!n) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (queue.length > 0 || signal.aborted) resolve();
        });
        wake = undefined;
        continue;
      }
      if (n.type === 'resync') yield { type: 'resync' };
      else if (n.type === 'run') {
        if (await mine(n.runId)) yield { type: 'run', runId: n.runId, status: n.status };
      } else if (n.type === 'interaction') {
        if (await mine(n.runId)) yield { type: 'interaction', runId: n.runId, interactionId: n.interactionId, status: n.status };
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    await unsubscribe();
  }
}
