import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeProviderServer } from '../../testing/fake-providers/index.js';
import { resolveModel } from '../resolve-model.js';
import type { Model, ModelStreamPart } from '../types.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { ManualClock } from './test-support/manual-clock.js';
import { withRecovery } from './with-recovery.js';

/** Recovery end to end: real provider packages, real HTTP, fake servers, a clock that never waits. */

const request = { messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };
let server: FakeProviderServer;
afterEach(() => server?.close());

async function collect(model: Model): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream(request)) parts.push(part);
  return parts;
}

const textOf = (parts: ModelStreamPart[]) => parts.map((p) => (p.type === 'text-delta' ? p.text : '')).join('');

describe('recovery over the real provider packages', () => {
  it('Anthropic: honours retry-after on a 429, then succeeds', async () => {
    server = await startFakeAnthropic({ apiKey: 'k' });
    server.enqueue({ status: 429, headers: { 'retry-after': '1' } }, { text: 'Back again.' });
    const clock = new ManualClock({ autoAdvance: true });
    const model = withRecovery(resolveModel('anthropic:claude-sonnet-4-5', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'k' } }), { clock, idleTimeoutMs: 0 });

    const parts = await collect(model);

    expect(textOf(parts)).toBe('Back again.');
    expect(clock.sleeps).toEqual([1000]);
    expect(server.requests).toHaveLength(2);
  });

  it('OpenAI: honours retry-after-ms on a 503', async () => {
    server = await startFakeOpenAI({ apiKey: 'k' });
    server.enqueue({ status: 503, headers: { 'retry-after-ms': '150' } }, { text: 'Fine now.' });
    const clock = new ManualClock({ autoAdvance: true });
    const model = withRecovery(resolveModel('openai:gpt-4o', { baseUrl: server.url, env: { OPENAI_API_KEY: 'k' } }), { clock, idleTimeoutMs: 0 });

    expect(textOf(await collect(model))).toBe('Fine now.');
    expect(clock.sleeps).toEqual([150]);
  });

  it('OpenAI: a provider answering 500 opens the circuit, which then fails fast without a request', async () => {
    server = await startFakeOpenAI({ apiKey: 'k', whenEmpty: { status: 500 } });
    const clock = new ManualClock({ autoAdvance: true });
    const breaker = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 30_000, provider: 'OpenAI', clock });
    const model = withRecovery(resolveModel('openai:gpt-4o', { baseUrl: server.url, env: { OPENAI_API_KEY: 'k' } }), {
      clock,
      idleTimeoutMs: 0,
      maxAttempts: 10,
      circuitBreaker: breaker,
      random: () => 0,
    });

    const error = await collect(model).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_circuit_open', cause: expect.objectContaining({ code: 'model_unavailable', status: 500 }) });
    expect(server.requests).toHaveLength(3);

    const again = await collect(model).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'model_circuit_open' });
    expect((again as Error).message).toMatch(/paused for 30 s/);
    expect(server.requests).toHaveLength(3);
  });

  it('OpenAI-compatible: a stream cut before any output is retried invisibly', async () => {
    server = await startFakeOpenAI();
    server.enqueue({ text: ['lost'], cutAfterEvents: 1 }, { text: ['Hello', ' again'] });
    const model = withRecovery(resolveModel('openai-compatible:qwen2.5-coder', { baseUrl: server.url, env: {} }), {
      clock: new ManualClock({ autoAdvance: true }),
      idleTimeoutMs: 0,
    });

    const parts = await collect(model);

    expect(textOf(parts)).toBe('Hello again');
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(server.requests).toHaveLength(2);
  });

  it('Anthropic: a stream cut after text was shown fails the step without a duplicate', async () => {
    server = await startFakeAnthropic({ apiKey: 'k' });
    // message_start, content_block_start, ping, first delta — then the socket is destroyed.
    server.enqueue({ text: ['Partial ', 'reply'], cutAfterEvents: 4 }, { text: 'never requested' });
    const model = withRecovery(resolveModel('anthropic:claude-sonnet-4-5', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'k' } }), {
      clock: new ManualClock({ autoAdvance: true }),
      idleTimeoutMs: 0,
    });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const part of model.stream(request)) if (part.type === 'text-delta') seen.push(part.text);
    })().catch((e: unknown) => e);

    expect(seen).toEqual(['Partial ']);
    expect(error).toMatchObject({ code: 'model_stream_interrupted', deliveredOutput: true });
    expect(server.requests).toHaveLength(1);
  });

  it('Anthropic: a 401 is never retried and names the key variable', async () => {
    server = await startFakeAnthropic({ apiKey: 'right' });
    const model = withRecovery(resolveModel('anthropic:claude-sonnet-4-5', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'wrong' } }), {
      clock: new ManualClock({ autoAdvance: true }),
      idleTimeoutMs: 0,
    });
    const error = await collect(model).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_auth_failed', status: 401, keyVariable: 'ANTHROPIC_API_KEY' });
    expect((error as Error).message).toMatch(/invalid x-api-key.*Check ANTHROPIC_API_KEY/);
    expect(server.requests).toHaveLength(1);
  });
});
