/**
 * One store read shared by every stream that needs the same thing because of the same push.
 *
 * A thousand clients watching one run would otherwise each read the same new events after each
 * commit (and a thousand user streams each look up the same run's owner). A read is shared only
 * between callers woken by the same notification object (the store hands one object to all its
 * subscribers): such a read started after that notification arrived, so it sees everything the
 * notification announced. A read started for an earlier notification, or for a stream's first
 * replay, is never reused: it may have run before the commit the later caller needs.
 */
export class SharedReads {
  private readonly inFlight = new Map<string, { token: object; promise: Promise<unknown> }>();

  /** `read()` now, or the promise of the same read already started for the same `token`. */
  run<T>(key: string, token: object | undefined, read: () => Promise<T>): Promise<T> {
    if (!token) return read();
    const current = this.inFlight.get(key);
    if (current && current.token === token) return current.promise as Promise<T>;
    const promise = read();
    const entry = { token, promise };
    this.inFlight.set(key, entry);
    const done = () => {
      if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
    };
    promise.then(done, done);
    return promise;
  }

  /** Reads in flight (for tests). */
  get size(): number {
    return this.inFlight.size;
  }
}

const byStore = new WeakMap<object, SharedReads>();

/** The shared reads of one store (streams of one server share them; another store never does). */
export function sharedReadsFor(store: object): SharedReads {
  let reads = byStore.get(store);
  if (!reads) {
    reads = new SharedReads();
    byStore.set(store, reads);
  }
  return reads;
}
