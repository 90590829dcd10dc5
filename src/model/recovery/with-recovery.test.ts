import { describe, expect, it, vi } from 'vitest';
import {
  ModelAuthenticationError,
  ModelRateLimitError,
  ModelStreamInterruptedError,
  ModelUnavailableError,
} from '../errors.js';
import type { Model, ModelRequest, ModelStreamPart } from '../types.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { ManualClock } from './test-support/manual-clock.js';
import { withRecovery } from './with-recovery.js';

const finish: ModelStreamPart = { type: 'finish', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 2 } };
const request: ModelRequest = { messages: [{ role: 'user', content: 'Hi' }], tools: [] };
const provider = { provider: 'Fake' };

/** Each call plays the next step: parts to yield, then optionally an error to throw. */
type Step = { parts?: ModelStreamPart[]; error?: Error; hang?: boolean };

function scriptedInner(steps: Step[]): Model & { calls: ModelRequest[] } {
  const calls: ModelRequest[] = [];
  return {
    specificationVersion: 'sage.model.v1',
    id: 'fake:model',
    contextWindow: 1000,
    calls,
    async *stream(req) {
      calls.push(req);
      const step = steps.shift() ?? { parts: [{ type: 'text-delta', text: 'ok' }, finish] };
      for (const part of step.parts ?? []) yield part;
      if (step.hang) {
        await new Promise((_, reject) => req.signal?.addEventListener('abort', () => reject(req.signal?.reason), { once: true }));
      }
      if (step.error) throw step.error;
    },
  };
}

async function collect(model: Model, req: ModelRequest = request): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream(req)) parts.push(part);
  return parts;
}

const unavailable = () => new ModelUnavailableError('HTTP 500', { ...provider, status: 500 });

describe('withRecovery', () => {
  it('retries a failure before output with full-jitter backoff, then succeeds', async () => {
    const inner = scriptedInner([{ error: unavailable() }, { error: unavailable() }]);
    const clock = new ManualClock({ autoAdvance: true });
    const onRetry = vi.fn();
    const model = withRecovery(inner, { clock, random: () => 0.5, baseDelayMs: 1000, idleTimeoutMs: 0, onRetry });

    const parts = await collect(model);

    expect(parts).toEqual([{ type: 'text-delta', text: 'ok' }, finish]);
    expect(inner.calls).toHaveLength(3);
    // Retry n waits random · min(max, base · 2^(n−1)).
    expect(clock.sleeps).toEqual([500, 1000]);
    expect(onRetry).toHaveBeenCalledWith(expect.objectContaining({ attempt: 1, delayMs: 500 }));
  });

  it('waits exactly what retry-after asks', async () => {
    const inner = scriptedInner([{ error: new ModelRateLimitError(2500, 'slow down', { ...provider, status: 429 }) }]);
    const clock = new ManualClock({ autoAdvance: true });
    await collect(withRecovery(inner, { clock, idleTimeoutMs: 0 }));
    expect(clock.sleeps).toEqual([2500]);
  });

  it('fails at once when retry-after exceeds the bound, with the rate-limit error', async () => {
    const inner = scriptedInner([{ error: new ModelRateLimitError(600_000, 'daily quota', { ...provider, status: 429 }) }]);
    const error = await collect(withRecovery(inner, { clock: new ManualClock({ autoAdvance: true }), idleTimeoutMs: 0, maxRetryAfterMs: 60_000 })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_rate_limited', retryAfterMs: 600_000 });
    expect(inner.calls).toHaveLength(1);
  });

  it('gives up after maxAttempts with the last error as cause', async () => {
    const last = unavailable();
    const inner = scriptedInner([{ error: unavailable() }, { error: unavailable() }, { error: last }]);
    const error = await collect(withRecovery(inner, { clock: new ManualClock({ autoAdvance: true }), maxAttempts: 3, idleTimeoutMs: 0, circuitBreaker: false })).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'model_retries_exhausted', attempts: 3, cause: last });
    expect(inner.calls).toHaveLength(3);
  });

  it('never retries an authentication failure', async () => {
    const inner = scriptedInner([{ error: new ModelAuthenticationError('ANTHROPIC_API_KEY', 'invalid x-api-key', { ...provider, status: 401 }) }]);
    const error = await collect(withRecovery(inner, { clock: new ManualClock({ autoAdvance: true }), idleTimeoutMs: 0 })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_auth_failed' });
    expect((error as Error).message).toContain('ANTHROPIC_API_KEY');
    expect(inner.calls).toHaveLength(1);
  });

  it('fails the step clearly, without retrying, when text was already streamed', async () => {
    const inner = scriptedInner([{ parts: [{ type: 'text-delta', text: 'Half a' }], error: unavailable() }]);
    const seen: string[] = [];
    const error = await (async () => {
      for await (const part of withRecovery(inner, { clock: new ManualClock({ autoAdvance: true }), idleTimeoutMs: 0 }).stream(request)) {
        if (part.type === 'text-delta') seen.push(part.text);
      }
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['Half a']);
    expect(error).toBeInstanceOf(ModelStreamInterruptedError);
    expect(error).toMatchObject({ deliveredOutput: true, retryable: false });
    expect(inner.calls).toHaveLength(1);
  });

  it('with bufferUntilFinish, retries a cut after output and delivers the text once', async () => {
    const cut = new ModelStreamInterruptedError(false, 'terminated', provider);
    const inner = scriptedInner([{ parts: [{ type: 'text-delta', text: 'Half a' }], error: cut }]);
    const parts = await collect(withRecovery(inner, { clock: new ManualClock({ autoAdvance: true }), idleTimeoutMs: 0, bufferUntilFinish: true }));
    expect(parts).toEqual([{ type: 'text-delta', text: 'ok' }, finish]);
    expect(inner.calls).toHaveLength(2);
  });

  it('aborts an attempt that goes silent past the idle timeout, then retries', async () => {
    const inner = scriptedInner([{ hang: true }]);
    const clock = new ManualClock();
    const model = withRecovery(inner, { clock, idleTimeoutMs: 10_000, random: () => 0 });
    const done = collect(model);

    await vi.waitFor(() => expect(clock.pendingTimers).toBe(1));
    await clock.advance(10_000);
    const parts = await done;

    expect(inner.calls[0]!.signal!.aborted).toBe(true);
    expect(inner.calls[0]!.signal!.reason).toMatchObject({ code: 'model_timeout' });
    expect(parts).toEqual([{ type: 'text-delta', text: 'ok' }, finish]);
  });

  it('stops waiting and does not retry when the caller aborts during backoff', async () => {
    const inner = scriptedInner([{ error: unavailable() }]);
    const clock = new ManualClock();
    const controller = new AbortController();
    const done = collect(withRecovery(inner, { clock, idleTimeoutMs: 0 }), { ...request, signal: controller.signal }).catch((e: unknown) => e);

    await vi.waitFor(() => expect(clock.pendingTimers).toBe(1));
    controller.abort(new Error('cancelled'));

    expect(await done).toMatchObject({ message: 'cancelled' });
    expect(inner.calls).toHaveLength(1);
  });

  it('opens the circuit after repeated failures, fails fast, and closes after a successful trial', async () => {
    const clock = new ManualClock({ autoAdvance: true });
    const breaker = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 30_000, provider: 'Fake', clock });
    const inner = scriptedInner([{ error: unavailable() }, { error: unavailable() }, { error: unavailable() }]);
    const model = withRecovery(inner, { clock, idleTimeoutMs: 0, maxAttempts: 5, circuitBreaker: breaker });

    const first = await collect(model).catch((e: unknown) => e);
    expect(first).toMatchObject({ code: 'model_circuit_open', cause: expect.objectContaining({ code: 'model_unavailable' }) });
    expect(inner.calls).toHaveLength(3);
    expect(breaker.state).toBe('open');

    const fast = await collect(model).catch((e: unknown) => e);
    expect(fast).toMatchObject({ code: 'model_circuit_open' });
    expect(inner.calls).toHaveLength(3);

    await clock.sleep(30_000);
    expect(breaker.state).toBe('half-open');
    expect(await collect(model)).toEqual([{ type: 'text-delta', text: 'ok' }, finish]);
    expect(breaker.state).toBe('closed');
  });

  it('keeps the inner model identity and window', () => {
    const model = withRecovery(scriptedInner([]));
    expect(model.id).toBe('fake:model');
    expect(model.contextWindow).toBe(1000);
  });
});

describe('withRecovery idle timeout on the system clock (one timer per wait, cancelled when the part arrives)', () => {
  const slowParts = (delays: number[]): Model & { calls: ModelRequest[] } => {
    const calls: ModelRequest[] = [];
    return {
      specificationVersion: 'sage.model.v1',
      id: 'fake:slow',
      contextWindow: 1000,
      calls,
      async *stream(req) {
        calls.push(req);
        for (const ms of delays) {
          await new Promise<void>((resolve, reject) => {
            const t = setTimeout(resolve, ms);
            req.signal?.addEventListener('abort', () => (clearTimeout(t), reject(req.signal?.reason)), { once: true });
          });
          yield { type: 'text-delta', text: `after ${ms}` };
        }
        yield finish;
      },
    };
  };
  const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  it('lets parts that each come within the timeout through, however long the whole stream, and leaves no timer behind', async () => {
    const before = timeouts();
    const inner = slowParts([30, 30, 30, 30, 30]);
    const parts = await collect(withRecovery(inner, { idleTimeoutMs: 80, maxAttempts: 1 }));
    expect(parts.map((p) => (p.type === 'text-delta' ? p.text : p.type))).toEqual(['after 30', 'after 30', 'after 30', 'after 30', 'after 30', 'finish']);
    expect(inner.calls[0]!.signal!.aborted).toBe(false);
    // The last part's timer was cancelled with it, not left to fire (nor to hold the process open).
    expect(timeouts()).toBeLessThanOrEqual(before);
  });

  it('aborts the call when one part takes longer than the timeout, with the timeout as the reason', async () => {
    const inner = slowParts([10, 200]);
    const error = await collect(withRecovery(inner, { idleTimeoutMs: 60, maxAttempts: 1 })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_timeout' });
    expect(inner.calls[0]!.signal!.aborted).toBe(true);
    expect(inner.calls[0]!.signal!.reason).toMatchObject({ code: 'model_timeout' });
  });
});
