import { ModelCircuitOpenError } from '../errors.js';
import { systemClock, type Clock } from './clock.js';

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failed calls that open the circuit. Default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before one trial call is let through, ms. Default 30 000. */
  cooldownMs?: number;
  /** Named in the error a caller sees while the circuit is open. */
  provider?: string;
  clock?: Clock;
}

/**
 * Fails fast when a provider keeps failing, instead of letting every run spend its
 * retries on it: closed → open after N consecutive failures → half-open after the cool-down,
 * where a single trial call decides → closed on success, open again on failure.
 *
 * Share one breaker between the models of one provider so they learn from each other's failures.
 *
 * @example
 * const breaker = new CircuitBreaker({ provider: 'anthropic', failureThreshold: 5, cooldownMs: 30_000 });
 * const model = withRecovery(resolveModel('anthropic:claude-sonnet-4-5'), { circuitBreaker: breaker });
 */
export class CircuitBreaker {
  private readonly failureThreshold: number;
  private readonly cooldownMs: number;
  private readonly provider: string;
  private readonly clock: Clock;
  private current: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialInFlight = false;

  constructor(options: CircuitBreakerOptions = {}) {
    this.failureThreshold = options.failureThreshold ?? 5;
    this.cooldownMs = options.cooldownMs ?? 30_000;
    this.provider = options.provider ?? 'The model provider';
    this.clock = options.clock ?? systemClock;
    if (!(this.failureThreshold >= 1)) throw new RangeError('failureThreshold must be at least 1');
  }

  get state(): CircuitState {
    if (this.current === 'open' && this.clock.now() - this.openedAt >= this.cooldownMs) this.current = 'half-open';
    return this.current;
  }

  /**
   * Asks to make a call. Throws `ModelCircuitOpenError` while open, and in half-open while the
   * trial call is out. Every successful acquire must end in `success`, `failure` or `release`.
   */
  acquire(lastError?: unknown): void {
    const state = this.state;
    if (state === 'closed') return;
    if (state === 'half-open' && !this.trialInFlight) {
      this.trialInFlight = true;
      return;
    }
    const retryInMs = state === 'open' ? this.cooldownMs - (this.clock.now() - this.openedAt) : 0;
    throw new ModelCircuitOpenError(this.provider, retryInMs, { cause: lastError });
  }

  success(): void {
    this.trialInFlight = false;
    this.failures = 0;
    this.current = 'closed';
  }

  failure(): void {
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    this.failures++;
    if (wasTrial || this.failures >= this.failureThreshold) {
      this.current = 'open';
      this.openedAt = this.clock.now();
    }
  }

  /** The call ended without telling anything about the provider's health (cancelled, bad request). */
  release(): void {
    this.trialInFlight = false;
  }
}
