import { ChannelSendError } from './errors.js';

/** What one attempt tells the retry loop: done, or retry (after the platform's retry-after when given), or give up. */
export type AttemptResult<T> = { ok: true; value: T } | { ok: false; retry: boolean; retryAfterMs?: number; status?: number; message: string };

export interface RetryOptions {
  channel: string;
  /** Attempts in all (default 5). */
  attempts?: number;
  /** First backoff, ms (default 200), doubled each time, capped at `maxDelayMs` (default 10 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** For tests: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs one platform call with retries: 429 waits the platform's retry-after, a platform that is
 * down (network error, 5xx) backs off exponentially; anything else fails at once. Gives up with
 * ChannelSendError, so the caller can log it; the approval itself lives in the store and stays
 * answerable on the web.
 */
export async function withRetry<T>(options: RetryOptions, attempt: () => Promise<AttemptResult<T>>): Promise<T> {
  const attempts = options.attempts ?? 5;
  const sleep = options.sleep ?? defaultSleep;
  let delay = options.baseDelayMs ?? 200;
  const maxDelay = options.maxDelayMs ?? 10_000;
  let last: { message: string; status?: number } = { message: 'no attempt made' };
  for (let i = 0; i < attempts; i++) {
    let result: AttemptResult<T>;
    try {
      result = await attempt();
    } catch (error) {
      // A thrown error is a transport failure (connection refused, reset): the platform is down.
      result = { ok: false, retry: true, message: error instanceof Error ? error.message : String(error) };
    }
    if (result.ok) return result.value;
    last = result;
    if (!result.retry || i === attempts - 1) break;
    await sleep(Math.min(maxDelay, result.retryAfterMs ?? delay));
    delay = Math.min(maxDelay, delay * 2);
  }
  throw new ChannelSendError(options.channel, last.message, last.status);
}
