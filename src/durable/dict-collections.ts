/**
 * A Map and a Set for the runner's long-lived bookkeeping of live runs (RunnerState: `live`,
 * `waiting`, `settling`), kept in a null-prototype object (a V8 dictionary) instead of V8's
 * Map/Set.
 *
 * Why: a Map or Set that lives long (it is in the old generation) and has an entry added and one
 * deleted for every run it tracks keeps what it held through every scavenge until the next full
 * GC: the hash table it replaces when it rehashes still holds those entries and links to the table
 * that replaced it. Each entry here is a run's whole incarnation (its loop, broker, recorder,
 * messages), so with approvals in flight a large share of the bytes allocated were promoted to the
 * old generation, where they died; with these, hardly any (figures in bench/README.md). An object's dictionary drops
 * an entry when it is deleted and keeps no link to the table it grew out of.
 *
 * Same behaviour as Map and Set for what the runner uses: insertion order (a key added again after
 * its delete goes last), `size`, deletes during an iteration (an entry deleted before it is reached
 * is not visited). Not the same: an entry added during an iteration may not be visited.
 */

/** A Map from string keys. Keys must not look like array indices ("0", "42"): those would not keep insertion order. Run ids never do. */
export class DictMap<V> implements Iterable<[string, V]> {
  private entriesByKey: Record<string, V> = Object.create(null) as Record<string, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    return key in this.entriesByKey;
  }

  get(key: string): V | undefined {
    return this.entriesByKey[key];
  }

  set(key: string, value: V): this {
    if (!(key in this.entriesByKey)) {
      if (INDEX_LIKE.test(key)) throw new Error(`DictMap: the key "${key}" looks like an array index, whose order an object does not keep`);
      this.count++;
    }
    this.entriesByKey[key] = value;
    return this;
  }

  delete(key: string): boolean {
    if (!(key in this.entriesByKey)) return false;
    delete this.entriesByKey[key];
    this.count--;
    return true;
  }

  clear(): void {
    this.entriesByKey = Object.create(null) as Record<string, V>;
    this.count = 0;
  }

  *keys(): IterableIterator<string> {
    for (const key in this.entriesByKey) yield key;
  }

  *values(): IterableIterator<V> {
    const entries = this.entriesByKey;
    for (const key in entries) yield entries[key]!;
  }

  *entries(): IterableIterator<[string, V]> {
    const entries = this.entriesByKey;
    for (const key in entries) yield [key, entries[key]!];
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }
}

/** Array indices ("0" up to 2^32 - 2), which an object keeps first and in numeric order. */
const INDEX_LIKE = /^(?:0|[1-9]\d{0,9})$/;

/** Each member's key in a DictSet: made once per object, not enumerable (a spread or JSON of it does not show it). */
const MEMBER_KEY = Symbol('DictSet.key');
let nextMemberKey = 0;

function memberKey(value: object): string {
  const own = (value as { [MEMBER_KEY]?: string })[MEMBER_KEY];
  if (own !== undefined) return own;
  const key = `m${(nextMemberKey++).toString(36)}`;
  Object.defineProperty(value, MEMBER_KEY, { value: key });
  return key;
}

/** A Set of objects (by identity), over a DictMap. */
export class DictSet<T extends object> implements Iterable<T> {
  private readonly members = new DictMap<T>();

  get size(): number {
    return this.members.size;
  }

  has(value: T): boolean {
    return this.members.has(memberKey(value));
  }

  add(value: T): this {
    this.members.set(memberKey(value), value);
    return this;
  }

  delete(value: T): boolean {
    return this.members.delete(memberKey(value));
  }

  clear(): void {
    this.members.clear();
  }

  values(): IterableIterator<T> {
    return this.members.values();
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.members.values();
  }
}
