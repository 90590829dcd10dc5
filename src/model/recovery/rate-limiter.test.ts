import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';
import { ManualClock } from './test-support/manual-clock.js';
import { RateLimiter } from './rate-limiter.js';

describe('RateLimiter', () => {
  it('spaces requests evenly at the configured rate', async () => {
    const clock = new ManualClock({ autoAdvance: true });
    const limiter = new RateLimiter({ requestsPerMinute: 60, clock });
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      await limiter.acquire();
      times.push(clock.now());
    }
    expect(times).toEqual([0, 1000, 2000, 3000]);
  });

  it('lets a burst through back to back, then spaces the rest', async () => {
    const clock = new ManualClock({ autoAdvance: true });
    const limiter = new RateLimiter({ requestsPerMinute: 60, burst: 3, clock });
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await limiter.acquire();
      times.push(clock.now());
    }
    expect(times).toEqual([0, 0, 0, 1000, 2000]);
  });

  it('refills while idle', async () => {
    const clock = new ManualClock({ autoAdvance: true });
    const limiter = new RateLimiter({ requestsPerMinute: 6, clock });
    await limiter.acquire();
    await clock.sleep(10_000);
    expect(limiter.waitTime()).toBe(0);
  });

  it('gives concurrent callers distinct slots in arrival order', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerMinute: 120, clock });
    const order: number[] = [];
    const all = [0, 1, 2].map((i) => limiter.acquire().then(() => order.push(i)));
    await clock.advance(499);
    expect(order).toEqual([0]);
    await clock.advance(1);
    expect(order).toEqual([0, 1]);
    await clock.advance(500);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2]);
  });

  it('rejects with the signal reason when aborted while waiting', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerMinute: 1, clock });
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});

describe('backoffDelay', () => {
  it('draws from [0, min(max, base · 2^(retry−1))]', () => {
    const opts = { baseDelayMs: 1000, maxDelayMs: 5000 };
    expect(backoffDelay(1, { ...opts, random: () => 0.999 })).toBe(999);
    expect(backoffDelay(3, { ...opts, random: () => 0.5 })).toBe(2000);
    expect(backoffDelay(10, { ...opts, random: () => 0.5 })).toBe(2500);
    expect(backoffDelay(2, { ...opts, random: () => 0 })).toBe(0);
  });
});
