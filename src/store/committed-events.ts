import type { RunEvent } from '../events/index.js';
import type { StoreNotification } from './types.js';

/**
 * The events of a batch this process committed, attached to its `events` notification (the object
 * the in-process notification hub hands every subscriber) so that a subscriber that wants them (an
 * SSE stream, a chat) need not read back what was just written. Held beside the notification, not
 * in it: Postgres sends notifications as JSON, where they would not fit, and a notification that
 * came from another process or over the wire has none (its subscribers read the log).
 *
 * Decoded once, on first use, from the same text the row holds, so the events are exactly what
 * readEvents would return (fresh objects, never the writer's own).
 *
 * Kept on the notification under a symbol, not enumerable (JSON, a spread or a copy leave it out),
 * rather than in a module WeakMap: on this Node (V8 11.3) a WeakMap's values survive every scavenge
 * until the next full GC, so each batch's text and closure (~3.5 KB an approval cycle) was promoted
 * with it; as a property it dies young with its notification.
 */
const COMMITTED = Symbol('sage.committedEvents');
type Attached = { decode: () => RunEvent[]; events?: readonly RunEvent[] };
type Carrier = { [COMMITTED]?: Attached };

export function attachCommittedEvents(notification: StoreNotification, decode: () => RunEvent[]): void {
  Object.defineProperty(notification, COMMITTED, { value: { decode } satisfies Attached, enumerable: false, writable: true, configurable: true });
}

/** The batch an `events` notification announced, in seq order, when this process wrote it; else undefined. */
export function committedEvents(notification: StoreNotification): readonly RunEvent[] | undefined {
  const entry = (notification as Carrier)[COMMITTED];
  if (!entry) return undefined;
  entry.events ??= entry.decode();
  return entry.events;
}

/**
 * Whether pushed batches carry on from `last` with no gap: each starts at or before the seq after
 * the previous one (an event between them that nobody pushed, written by another process, would
 * be missing). Batches are in commit order, each in seq order.
 */
export function continuesFrom(batches: readonly (readonly RunEvent[])[], last: number): boolean {
  let next = last + 1;
  for (const events of batches) {
    if (events.length === 0) continue;
    if (events[0]!.seq > next) return false;
    next = Math.max(next, events[events.length - 1]!.seq + 1);
  }
  return true;
}
