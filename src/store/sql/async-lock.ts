/**
 * Serialises async critical sections on one connection. better-sqlite3 is synchronous, but a
 * transaction spanning `await`s would otherwise let another caller's statements run inside it.
 */
export class AsyncLock {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
