import type { StoreNotification } from './types.js';

/**
 * Fans notifications out to in-process subscribers: by run id, or `*` for all. Delivery is on a
 * later microtask so a subscriber never runs inside the write that caused it.
 */
export class NotificationHub {
  private readonly byTarget = new Map<string, Set<(n: StoreNotification) => void>>();

  add(target: string, fn: (n: StoreNotification) => void): () => void {
    let set = this.byTarget.get(target);
    if (!set) {
      set = new Set();
      this.byTarget.set(target, set);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.byTarget.delete(target);
    };
  }

  get size(): number {
    let n = 0;
    for (const set of this.byTarget.values()) n += set.size;
    return n;
  }

  deliver(notification: StoreNotification): void {
    // A resync concerns everyone (anything may have been missed); anything else its run and `*`.
    const targets = notification.type === 'resync' ? [...this.byTarget.values()] : [this.byTarget.get(notification.runId), this.byTarget.get('*')];
    for (const set of targets) {
      if (!set) continue;
      for (const fn of [...set]) {
        queueMicrotask(() => {
          try {
            fn(notification);
          } catch {
            // A subscriber's bug must not break the store or the other subscribers.
          }
        });
      }
    }
  }
}
