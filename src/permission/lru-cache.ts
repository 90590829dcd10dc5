/** A small bounded LRU map (Map keeps insertion order; a hit moves the key to the end). */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  private newest: K | undefined;
  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    // The newest key is already at the end: asking again for it (the common case) moves nothing.
    if (value !== undefined && key !== this.newest) {
      this.newest = key;
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.newest = key;
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }
}
