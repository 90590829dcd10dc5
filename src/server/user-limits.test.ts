import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import { DurableRunDriver } from './durable-driver.js';
import { startServer, type RunningServer } from './server.js';
import { askingScript, enc, eventually, TOKENS } from './test-support/harness.js';
import { SseClient } from './test-support/sse-client.js';
import { DEFAULT_USER_LIMITS, resolveUserLimits, StreamSlots, type UserLimits } from '../runtime/user-limits.js';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

async function serve(limits: Partial<UserLimits>) {
  const dir = mkdtempSync(join(tmpdir(), 'sage-user-limits-'));
  const store = await openSqliteStore(join(dir, 'sage.db'));
  const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
  const server: RunningServer = await startServer({
    store,
    driver,
    port: 0,
    tokens: `${TOKENS.alice}=alice,${TOKENS.bob}=bob`,
    env: {},
    logger: pino({ level: 'silent' }),
    webRoot: false,
    closeStore: true,
    limits,
  });
  open.push(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const script = join(dir, 'ask.json');
  writeFileSync(script, JSON.stringify({ turns: askingScript() }));
  const call = async (who: 'alice' | 'bob', method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${TOKENS[who]}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const start = (who: 'alice' | 'bob') => call(who, 'POST', '/runs', { task: 'write a file', model: `scripted:${script}` });
  return { server, store, call, start };
}

describe('per-user limits (issue 11)', () => {
  test('runs in flight: the next start is a 429 that says why; other users are not affected', async () => {
    const s = await serve({ runsPerUser: 2 });
    expect((await s.start('alice')).status).toBe(201);
    expect((await s.start('alice')).status).toBe(201);
    const third = await s.start('alice');
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'too_many_runs', message: expect.stringMatching(/2 runs in flight.*cancel one/) });
    expect(await s.store.listRuns({ userId: 'alice' })).toHaveLength(2);
    expect((await s.start('bob')).status).toBe(201);
  });

  test('parallel starts cannot all slip past the count', async () => {
    const s = await serve({ runsPerUser: 3 });
    const results = await Promise.all(Array.from({ length: 8 }, () => s.start('alice')));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 429)).toHaveLength(5);
    expect(await s.store.listRuns({ userId: 'alice' })).toHaveLength(3);
  });

  test('a finished (cancelled) run frees its place', async () => {
    const s = await serve({ runsPerUser: 1 });
    const first = await s.start('alice');
    expect((await s.start('alice')).status).toBe(429);
    expect((await s.call('alice', 'POST', `/runs/${first.body.id}/cancel`, {})).status).toBe(200);
    await eventually(async () => ((await s.store.getRun(first.body.id))?.status === 'cancelled' ? true : undefined));
    expect((await s.start('alice')).status).toBe(201);
  });

  test('pending interactions: a user with the most waiting requests cannot start another run', async () => {
    const s = await serve({ pendingInteractionsPerUser: 1 });
    const first = await s.start('alice');
    await eventually(async () => (await s.store.listInteractions({ runId: first.body.id, status: ['pending'] }))[0]);
    const second = await s.start('alice');
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('too_many_pending_interactions');
    expect(await s.store.listRuns({ userId: 'alice' })).toHaveLength(1);
  });

  test('event streams: one too many is a 429, an answer is not taken when its stream would be refused, and a closed stream frees its place', async () => {
    const s = await serve({ streamsPerUser: 1 });
    const run = await s.start('alice');
    const interactionId = await eventually(async () => (await s.store.listInteractions({ runId: run.body.id, status: ['pending'] }))[0]?.id);
    const first = new SseClient(`${s.server.url}/runs/${run.body.id}/events`, { token: TOKENS.alice });
    await first.waitFor((e) => e.type === 'interaction.requested');
    const second = await s.call('alice', 'GET', `/runs/${run.body.id}/events`, undefined, { accept: 'text/event-stream' });
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 'too_many_streams', message: expect.stringMatching(/1 event streams open/) });
    const answer = await s.call('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { kind: 'confirm', confirmed: true }, { accept: 'text/event-stream' });
    expect(answer.status).toBe(429);
    expect((await s.store.getInteraction(interactionId))?.status).toBe('pending');
    // Bob has his own count.
    expect((await s.call('bob', 'GET', '/runs', undefined, { accept: 'text/event-stream' })).status).toBe(200);
    first.abort();
    await eventually(async () => {
      const again = await fetch(`${s.server.url}/runs/${run.body.id}/events`, { headers: { authorization: `Bearer ${TOKENS.alice}`, accept: 'text/event-stream' } });
      await again.body?.cancel();
      return again.status === 200 ? true : undefined;
    });
  });

  test('a run waiting in memory shows what it waits for (pendingInteractionId)', async () => {
    const s = await serve({});
    const run = await s.start('alice');
    const interactionId = await eventually(async () => (await s.store.listInteractions({ runId: run.body.id, status: ['pending'] }))[0]?.id);
    expect((await s.store.getRun(run.body.id))?.status).toBe('running');
    expect((await s.call('alice', 'GET', `/runs/${run.body.id}`)).body.pendingInteractionId).toBe(interactionId);
    expect((await s.call('alice', 'GET', '/runs')).body.runs[0].pendingInteractionId).toBe(interactionId);
  });
});

describe('limit settings', () => {
  test('defaults, overrides and refusals', () => {
    expect(resolveUserLimits()).toEqual(DEFAULT_USER_LIMITS);
    expect(resolveUserLimits({ runsPerUser: 5, streamsPerUser: undefined })).toEqual({ ...DEFAULT_USER_LIMITS, runsPerUser: 5 });
    expect(() => resolveUserLimits({ runsPerUser: 0 })).toThrowError(expect.objectContaining({ code: 'server_config', message: expect.stringMatching(/runsPerUser: a limit is at least 1/) }));
    expect(() => resolveUserLimits({ streamsPerUser: 1.5 })).toThrow(/whole number/);
  });

  test('a released stream slot is counted once, however often it is released', () => {
    const slots = new StreamSlots(2);
    const a = slots.acquire('alice');
    slots.acquire('alice');
    expect(() => slots.acquire('alice')).toThrowError(expect.objectContaining({ code: 'too_many_streams' }));
    a.release();
    a.release();
    expect(slots.count('alice')).toBe(1);
  });
});
