/**
 * Time as recovery sees it. Injected so tests drive backoff, cool-downs, rate limits and idle
 * timeouts deterministically, without real waiting.
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first, clearing its timer. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fn` after `ms` unless cancelled first. Optional: a clock without it is driven through
   * `sleep` (an AbortController and a promise per timer). Recovery arms one per streamed part.
   */
  timer?(ms: number, fn: () => void): { cancel(): void };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  timer(ms, fn) {
    const timeout = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(timeout) };
  },
};

/** `clock.timer`, or the same through `clock.sleep` for a clock that has none. */
export function startTimer(clock: Clock, ms: number, fn: () => void): { cancel(): void } {
  if (clock.timer) return clock.timer(ms, fn);
  const stop = new AbortController();
  clock.sleep(ms, stop.signal).then(fn, () => {});
  return { cancel: () => stop.abort() };
}
