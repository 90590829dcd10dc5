import type { Clock } from '../clock.js';

interface Timer {
  at: number;
  resolve(): void;
}

/**
 * A clock for tests. Time moves only when told: `advance(ms)` fires the sleeps that fall due, in
 * order. With `autoAdvance`, every sleep moves time forward at once and resolves, which makes
 * retry and backoff tests instant; `sleeps` records what was asked.
 *
 * @example
 * const clock = new ManualClock({ autoAdvance: true });
 * const model = withRecovery(inner, { clock, idleTimeoutMs: 0 });
 */
export class ManualClock implements Clock {
  /** Every sleep asked for, ms, in order. */
  readonly sleeps: number[] = [];
  private time: number;
  private readonly timers = new Set<Timer>();
  private readonly autoAdvance: boolean;

  constructor(options: { start?: number; autoAdvance?: boolean } = {}) {
    this.time = options.start ?? 0;
    this.autoAdvance = options.autoAdvance ?? false;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.autoAdvance) {
      this.time += Math.max(0, ms);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const timer: Timer = {
        at: this.time + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.timers.delete(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.add(timer);
    });
  }

  /** Sleeps not yet due. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward, firing due sleeps in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    for (;;) {
      const due = [...this.timers].filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers.delete(due);
      this.time = due.at;
      due.resolve();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.time = target;
  }
}
