/**
 * `{ ...source, ...fields }`: the same own enumerable keys in the same order (a key of `fields`
 * already in `source` keeps its place), made with Object.assign. A spread followed by more keys
 * clones `source` and then adds to the clone, a slow path in Node's engine, taken on every ask
 * (figures in bench/README.md). Object.assign sets where a spread
 * defines, which differs only for an own `__proto__` key (it would set the prototype): such a
 * source is spread as before.
 */
export function withFields<S extends object, F extends object>(source: S, fields: F): S & F {
  if (Object.hasOwn(source, '__proto__') || Object.hasOwn(fields, '__proto__')) return { ...source, ...fields };
  return Object.assign({}, source, fields);
}
