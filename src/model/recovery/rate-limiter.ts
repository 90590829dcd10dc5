import { systemClock, type Clock } from './clock.js';

export interface RateLimiterOptions {
  requestsPerMinute: number;
  /**
   * Requests that may go out back to back before spacing applies. Default 1, which guarantees no
   * 60-second window ever holds more than `requestsPerMinute` requests; a larger burst lets
   * parallel subagents start together at the cost of that guarantee.
   */
  burst?: number;
  clock?: Clock;
}

/**
 * A token bucket capping requests per minute, implemented as its equivalent GCRA:
 * each request reserves the next free slot at once, so concurrent callers are spaced fairly in
 * arrival order without a queue. Share one limiter per provider.
 *
 * @example
 * const limiter = new RateLimiter({ requestsPerMinute: 50 });
 * const model = withRecovery(resolveModel('openai:gpt-4o'), { rateLimiter: limiter });
 */
export class RateLimiter {
  private readonly intervalMs: number;
  private readonly toleranceMs: number;
  private readonly clock: Clock;
  /** When the bucket would be full again if no one else asked (the theoretical arrival time). */
  private nextFreeAt = Number.NEGATIVE_INFINITY;

  constructor(options: RateLimiterOptions) {
    if (!(options.requestsPerMinute > 0)) throw new RangeError('requestsPerMinute must be positive');
    const burst = Math.max(1, Math.floor(options.burst ?? 1));
    this.intervalMs = 60_000 / options.requestsPerMinute;
    this.toleranceMs = (burst - 1) * this.intervalMs;
    this.clock = options.clock ?? systemClock;
  }

  /** How long a request made now would wait, ms. */
  waitTime(): number {
    const now = this.clock.now();
    return Math.max(0, Math.max(this.nextFreeAt, now) - this.toleranceMs - now);
  }

  /** Waits for a slot; rejects with the signal's reason if it aborts while waiting. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const now = this.clock.now();
    const arrival = Math.max(this.nextFreeAt, now);
    const wait = arrival - this.toleranceMs - now;
    this.nextFreeAt = arrival + this.intervalMs;
    if (wait > 0) await this.clock.sleep(wait, signal);
  }
}
