import { describe, expect, it } from 'vitest';
import { DictMap, DictSet } from './dict-collections.js';

describe('DictMap', () => {
  it('behaves as a Map of string keys: order, size, re-adding, deleting while iterating', () => {
    const m = new DictMap<number>();
    const ref = new Map<string, number>();
    const ops: [string, string, number?][] = [
      ['set', 'run_b', 1], ['set', 'run_a', 2], ['set', '__proto__', 3], ['set', 'run_c', 4], ['set', 'run_b', 5],
      ['delete', 'run_a'], ['delete', 'missing'], ['set', 'run_a', 6], ['set', 'constructor', 7], ['set', '01', 8], ['set', '-1', 9],
    ];
    for (const [op, key, value] of ops) {
      if (op === 'set') {
        expect(m.set(key, value!)).toBe(m);
        ref.set(key, value!);
      } else expect(m.delete(key)).toBe(ref.delete(key));
      expect([...m]).toEqual([...ref]);
      expect(m.size).toBe(ref.size);
    }
    expect([...m.keys()]).toEqual([...ref.keys()]);
    expect([...m.values()]).toEqual([...ref.values()]);
    expect(m.get('run_a')).toBe(6);
    expect(m.get('toString')).toBeUndefined();
    expect(m.has('constructor')).toBe(true);
    expect(m.has('hasOwnProperty')).toBe(false);
    // Deleted before it is reached: not visited (as a Map); the current one may go.
    const seen: string[] = [];
    for (const [key] of m) {
      seen.push(key);
      m.delete(key);
      if (key === 'run_b') m.delete('run_c');
    }
    expect(seen).toEqual(['run_b', '__proto__', 'run_a', 'constructor', '01', '-1']);
    expect(m.size).toBe(0);
    m.set('x', 1);
    m.clear();
    expect([...m]).toEqual([]);
    expect(m.size).toBe(0);
  });

  it('refuses a key an object would not keep in insertion order', () => {
    expect(() => new DictMap<number>().set('42', 1)).toThrow(/array index/);
  });
});

describe('DictSet', () => {
  it('behaves as a Set of objects by identity: order, size, re-adding moves last, deleting while iterating', () => {
    const s = new DictSet<object>();
    const ref = new Set<object>();
    const [a, b, c] = [{ id: 'a' }, { id: 'a' }, Promise.resolve()];
    const label = (x: object) => (x === a ? 'a' : x === b ? 'b' : x === c ? 'c' : '?');
    for (const [op, x] of [['add', a], ['add', b], ['add', c], ['add', a], ['delete', b], ['add', b], ['delete', {}]] as const) {
      if (op === 'add') {
        expect(s.add(x)).toBe(s);
        ref.add(x);
      } else expect(s.delete(x)).toBe(ref.delete(x));
      expect([...s].map(label)).toEqual([...ref].map(label));
      expect(s.size).toBe(ref.size);
    }
    expect([...s].map(label)).toEqual(['a', 'c', 'b']);
    expect(s.has(a) && s.has(b) && s.has(c)).toBe(true);
    expect(s.has({ id: 'a' })).toBe(false);
    // The member's key is not enumerable: a spread or JSON of it is unchanged.
    expect(Object.keys({ ...a })).toEqual(['id']);
    expect(Object.getOwnPropertySymbols({ ...a })).toEqual([]);
    expect(JSON.stringify(a)).toBe('{"id":"a"}');
    // Deleted before it is reached: not visited (as a Set).
    const seen: string[] = [];
    for (const x of s) {
      seen.push(label(x));
      s.delete(x);
      if (x === a) s.delete(b);
    }
    expect(seen).toEqual(['a', 'c']);
    expect(s.size).toBe(0);
  });
});
