/**
 * A single-consumer async queue: the loop pushes without waiting, the consumer pulls with
 * `for await`. Pushing never blocks the loop; a slow consumer only buffers.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private closed = false;
  private iterating = false;

  /**
   * `unreadLimit`: while nobody iterates, only the newest this many are kept (a durable run's events
   * are all in the store; most durable runs are never iterated, and a long chat session would
   * otherwise hold every event, tool output included, for its whole life).
   */
  constructor(private readonly unreadLimit = Infinity) {}

  push(item: T): void {
    if (this.closed) return;
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter({ value: item, done: false });
      return;
    }
    // Nobody will iterate (a limit of 0): nothing to keep.
    if (this.unreadLimit === 0 && !this.iterating) return;
    this.items.push(item);
    // Dropped in chunks of the limit, so a run that is never read does not shift on every push.
    if (!this.iterating && this.items.length >= this.unreadLimit * 2) this.items = this.items.slice(-this.unreadLimit);
  }

  close(): void {
    this.closed = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterating) throw new Error('A run\'s events can be iterated once; use the onEvent option to observe them elsewhere.');
    this.iterating = true;
    return {
      next: () => {
        if (this.head < this.items.length) {
          const value = this.items[this.head++]!;
          if (this.head === this.items.length) {
            // Drained: drop the delivered items so they do not outlive their turn.
            this.items.length = 0;
            this.head = 0;
          } else if (this.head > 1024 && this.head * 2 > this.items.length) {
            this.items = this.items.slice(this.head);
            this.head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: () => {
        this.items = [];
        this.head = 0;
        this.closed = true;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
