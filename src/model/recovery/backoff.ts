export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  /** In [0, 1); `Math.random` by default, injected by tests. */
  random?: () => number;
}

/**
 * Exponential backoff with full jitter: a uniform delay in [0, min(max, base · 2^(retry−1))].
 * Full jitter spreads clients that failed together (one overloaded provider, many runs), so
 * they do not all come back at the same instant.
 */
export function backoffDelay(retry: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor((options.random ?? Math.random)() * ceiling);
}
