import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from './circuit-breaker.js';
import { ManualClock } from './test-support/manual-clock.js';

function setup() {
  const clock = new ManualClock();
  const breaker = new CircuitBreaker({ failureThreshold: 2, cooldownMs: 1000, provider: 'Anthropic', clock });
  return { clock, breaker };
}

describe('CircuitBreaker', () => {
  it('stays closed below the threshold and resets the count on success', () => {
    const { breaker } = setup();
    breaker.acquire();
    breaker.failure();
    breaker.acquire();
    breaker.success();
    breaker.acquire();
    breaker.failure();
    expect(breaker.state).toBe('closed');
  });

  it('opens after N consecutive failures and fails fast with the time left', async () => {
    const { breaker, clock } = setup();
    breaker.failure();
    breaker.failure();
    expect(breaker.state).toBe('open');
    await clock.advance(400);
    expect(() => breaker.acquire()).toThrowError(expect.objectContaining({ code: 'model_circuit_open', retryInMs: 600 }));
  });

  it('lets exactly one trial through when half-open', async () => {
    const { breaker, clock } = setup();
    breaker.failure();
    breaker.failure();
    await clock.advance(1000);
    expect(breaker.state).toBe('half-open');
    breaker.acquire();
    expect(() => breaker.acquire()).toThrowError(/trial call/);
  });

  it('re-opens at once when the trial fails, and closes when it succeeds', async () => {
    const { breaker, clock } = setup();
    breaker.failure();
    breaker.failure();
    await clock.advance(1000);
    breaker.acquire();
    breaker.failure();
    expect(breaker.state).toBe('open');
    await clock.advance(1000);
    breaker.acquire();
    breaker.success();
    expect(breaker.state).toBe('closed');
  });

  it('frees the trial slot when a call ends without a verdict', async () => {
    const { breaker, clock } = setup();
    breaker.failure();
    breaker.failure();
    await clock.advance(1000);
    breaker.acquire();
    breaker.release();
    expect(() => breaker.acquire()).not.toThrow();
  });
});
