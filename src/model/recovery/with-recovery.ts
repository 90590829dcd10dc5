import { SageError } from '../../errors/index.js';
import {
  isRetryableModelError,
  ModelRetriesExhaustedError,
  ModelStreamInterruptedError,
  ModelTimeoutError,
} from '../errors.js';
import type { Model, ModelRequest, ModelStreamPart } from '../types.js';
import { backoffDelay } from './backoff.js';
import { CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';
import { startTimer, systemClock, type Clock } from './clock.js';
import { RateLimiter, type RateLimiterOptions } from './rate-limiter.js';

export interface RetryInfo {
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMs: number;
  error: SageError;
}

export interface RecoveryOptions {
  /** Attempts per call, the first included. Default 4. */
  maxAttempts?: number;
  /** First backoff ceiling, doubled per retry. Default 1 000 ms. */
  baseDelayMs?: number;
  /** Cap of the backoff ceiling. Default 30 000 ms. */
  maxDelayMs?: number;
  /**
   * The longest `retry-after` honoured, ms. A provider asking for more fails the call at once
   * with its rate-limit error (which says how long), rather than stalling the run. Default 60 000.
   */
  maxRetryAfterMs?: number;
  /** Abort an attempt when no part arrives for this long, ms (0: never). Default 300 000. */
  idleTimeoutMs?: number;
  /** An instance to share per provider, options for a private one, or `false` for none. */
  circuitBreaker?: CircuitBreaker | CircuitBreakerOptions | false;
  /** Requests-per-minute cap: an instance to share per provider, or options for a private one. */
  rateLimiter?: RateLimiter | RateLimiterOptions;
  /**
   * Hold each attempt's parts until its `finish`, so any failure can be retried invisibly. Off by
   * default: a person watching the terminal should see text as it comes, and cuts after output
   * are rare (most provider failures happen before the first byte). Turn it on for unattended runs.
   */
  bufferUntilFinish?: boolean;
  clock?: Clock;
  random?: () => number;
  /** Told before each retry's wait (for logs). */
  onRetry?: (info: RetryInfo) => void;
}

/**
 * Wraps a Model with retries (exponential backoff, full jitter, `retry-after` honoured), an idle
 * timeout, a circuit breaker and an optional rate limiter.
 *
 * A failure is retried only while nothing has reached the consumer. Once text was streamed, a
 * retry would show it twice, so the step fails with `ModelStreamInterruptedError`
 * (`deliveredOutput: true`); the loop appends a message only after `finish`, so the partial reply
 * never enters the conversation. With `bufferUntilFinish`, nothing is delivered before `finish`
 * and every retryable failure is retried.
 *
 * @example
 * const model = withRecovery(resolveModel('anthropic:claude-sonnet-4-5'), {
 *   maxAttempts: 4,
 *   circuitBreaker: anthropicBreaker,
 *   rateLimiter: { requestsPerMinute: 50 },
 * });
 */
export function withRecovery(model: Model, options: RecoveryOptions = {}): Model {
  return new RecoveringModel(model, options);
}

class RecoveringModel implements Model {
  readonly specificationVersion = 'sage.model.v1' as const;
  readonly id: string;
  readonly contextWindow?: number;
  private readonly provider: string;
  private readonly clock: Clock;
  private readonly breaker?: CircuitBreaker;
  private readonly limiter?: RateLimiter;
  private readonly maxAttempts: number;
  private readonly idleTimeoutMs: number;

  constructor(
    private readonly inner: Model,
    private readonly options: RecoveryOptions,
  ) {
    this.id = inner.id;
    this.contextWindow = inner.contextWindow;
    this.provider = inner.id.split(':')[0] ?? inner.id;
    this.clock = options.clock ?? systemClock;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 4);
    this.idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
    const breaker = options.circuitBreaker;
    this.breaker =
      breaker === false ? undefined : breaker instanceof CircuitBreaker ? breaker : new CircuitBreaker({ provider: this.provider, clock: this.clock, ...breaker });
    const limiter = options.rateLimiter;
    this.limiter = limiter === undefined ? undefined : limiter instanceof RateLimiter ? limiter : new RateLimiter({ clock: this.clock, ...limiter });
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    let lastError: unknown;
    for (let attempt = 1; ; attempt++) {
      if (request.signal?.aborted) throw request.signal.reason;
      this.breaker?.acquire(lastError);
      let outcome: 'success' | 'failure' | 'neutral' = 'neutral';
      let delivered = false;
      try {
        await this.limiter?.acquire(request.signal);
        const buffered: ModelStreamPart[] = [];
        for await (const part of this.attempt(request)) {
          if (this.options.bufferUntilFinish) {
            buffered.push(part);
          } else {
            delivered = true;
            yield part;
          }
        }
        outcome = 'success';
        this.breaker?.success();
        yield* buffered;
        return;
      } catch (caught) {
        if (request.signal?.aborted) throw caught;
        const error = caught;
        const retryable = isRetryableModelError(error);
        // Transient failures are the provider's, whatever was delivered; the rest (a bad key, a
        // bad request) says nothing about its health.
        if (retryable || isTransientFailure(error)) {
          outcome = 'failure';
          this.breaker?.failure();
        }
        if (!retryable) throw error;
        if (delivered) throw afterDelivery(error as SageError, this.provider);
        if (attempt >= this.maxAttempts) throw new ModelRetriesExhaustedError(attempt, error);
        const asked = retryAfterOf(error);
        if (asked !== undefined && asked > (this.options.maxRetryAfterMs ?? 60_000)) throw error;
        const delayMs =
          asked ??
          backoffDelay(attempt, { baseDelayMs: this.options.baseDelayMs ?? 1_000, maxDelayMs: this.options.maxDelayMs ?? 30_000, random: this.options.random });
        this.options.onRetry?.({ attempt, delayMs, error: error as SageError });
        lastError = error;
        await this.clock.sleep(delayMs, request.signal);
      } finally {
        // The consumer left early, or the call ended without a verdict: free a half-open trial.
        if (outcome === 'neutral') this.breaker?.release();
      }
    }
  }

  /** One attempt, with its own abort so an idle timeout stops the HTTP request too. */
  private async *attempt(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const controller = new AbortController();
    const outer = request.signal;
    const forward = () => controller.abort(outer!.reason);
    outer?.addEventListener('abort', forward, { once: true });
    const iterator = this.inner.stream({ ...request, signal: controller.signal })[Symbol.asyncIterator]();
    let delivered = false;
    let done = false;
    // One idle-timeout promise per attempt; each wait for a part arms a timer that settles it.
    let fire!: (error: Error) => void;
    const timedOut = new Promise<never>((_, reject) => {
      fire = reject;
    });
    timedOut.catch(() => {});
    const onIdle = () => {
      const error = new ModelTimeoutError(this.idleTimeoutMs, delivered, { provider: this.provider });
      controller.abort(error);
      fire(error);
    };
    try {
      for (;;) {
        const next = this.idleTimeoutMs > 0 ? await this.withIdleTimeout(iterator.next(), timedOut, onIdle) : await iterator.next();
        if (next.done) {
          done = true;
          return;
        }
        delivered = true;
        yield next.value;
      }
    } finally {
      outer?.removeEventListener('abort', forward);
      if (!done) {
        controller.abort(new Error('The model call was abandoned.'));
        // Not awaited: an inner generator stuck in a read settles on the abort above.
        iterator.return?.().catch(() => {});
      }
    }
  }

  /** `pending`, or the idle timeout when it takes `idleTimeoutMs` (the timer is cancelled as soon as it settles). */
  private async withIdleTimeout<T>(pending: Promise<T>, timedOut: Promise<never>, onIdle: () => void): Promise<T> {
    const timer = startTimer(this.clock, this.idleTimeoutMs, onIdle);
    try {
      return await Promise.race([pending, timedOut]);
    } finally {
      timer.cancel();
    }
  }
}

/** Read by shape, not class, so errors from a duplicate copy of the package work too. */
function retryAfterOf(error: unknown): number | undefined {
  const value = SageError.isInstance(error) ? (error as { retryAfterMs?: unknown }).retryAfterMs : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : undefined;
}

function isTransientFailure(error: unknown): boolean {
  return SageError.isInstance(error) && (error.code === 'model_stream_interrupted' || error.code === 'model_timeout');
}

/** A retryable failure after text reached the consumer becomes a clear, final interruption. */
function afterDelivery(error: SageError, provider: string): SageError {
  if (error.code === 'model_stream_interrupted' || error.code === 'model_timeout') return error;
  return new ModelStreamInterruptedError(true, error.message, { provider, cause: error });
}
