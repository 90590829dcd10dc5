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

/** Run owners by store, shared by every user stream: a run's owner never changes. */
const ownersByStore = new WeakMap<Store, Map<string, Promise<string | null>>>();

function ownerLookup(store: Store): (runId: string) => Promise<string | null> {
  let owners = ownersByStore.get(store);
  if (!owners) {
    owners = new Map();
    ownersByStore.set(store, owners);
  }
  const cache = owners;
  return (runId) => {
    let owner = cache.get(runId);
    if (!owner) {
      if (cache.size > 10_000) cache.clear();
      owner = store.getRun(runId).then((run) => run?.userId ?? null);
      cache.set(runId, owner);
      // A failed read is not remembered: the next change asks again.
      owner.catch(() => cache.get(runId) === owner && cache.delete(runId));
    }
    return owner;
  };
}

/** The user event of a notification, made once: every stream that shows it sends the same object (and frame). */
const userEvents = new WeakMap<StoreNotification, UserEvent>();

function userEventOf(n: StoreNotification & { type: 'run' | 'interaction' | 'resync' }): UserEvent {
  let event = userEvents.get(n);
  if (!event) {
    if (n.type === 'resync') event = { type: 'resync' };
    else if (n.type === 'run') event = { type: 'run', runId: n.runId, status: n.status };
    else event = { type: 'interaction', runId: n.runId, interactionId: n.interactionId, status: n.status };
    userEvents.set(n, event);
  }
  return event;
}

/**
 * The caller's run and interaction changes as the store announces them (an admin gets everyone's).
 * A run's owner is read once and remembered for all streams, so a busy run costs one lookup, not
 * one per change and per client.
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
  const ownerOf = ownerLookup(store);
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
      if (n.type === 'resync') yield userEventOf(n);
      else if ((n.type === 'run' || n.type === 'interaction') && (await mine(n.runId))) yield userEventOf(n);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    await unsubscribe();
  }
}
