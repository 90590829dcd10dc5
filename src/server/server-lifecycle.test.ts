import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, test } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import { DurableRunDriver } from './durable-driver.js';
import { createServer } from './server.js';
import { startAskingRun, startHarness, TOKENS } from './test-support/harness.js';
import { SseClient } from './test-support/sse-client.js';

describe('running without auth', () => {
  test('is refused on a non-loopback address', async () => {
    const store = await openSqliteStore(':memory:');
    const driver = await DurableRunDriver.open(store);
    try {
      expect(() => createServer({ store, driver, host: '0.0.0.0', env: {}, logger: pino({ level: 'silent' }) })).toThrow(expect.objectContaining({ code: 'server_config' }));
      expect(createServer({ store, driver, host: '0.0.0.0', tokens: 'tok-12345678=alice', env: {}, logger: pino({ level: 'silent' }) }).auth).toBe(true);
    } finally {
      await driver.close();
      await store.close();
    }
  });

  test('on loopback every request acts as the local admin, and the server says so at start', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const dir = mkdtempSync(join(tmpdir(), 'sage-noauth-'));
    const store = await openSqliteStore(join(dir, 'db.sqlite'));
    const driver = await DurableRunDriver.open(store, { roots: [dir] });
    const { startServer } = await import('./server.js');
    const server = await startServer({ store, driver, port: 0, env: {}, logger, webRoot: false, closeStore: true });
    try {
      const me = await fetch(`${server.url}/me`);
      expect(await me.json()).toMatchObject({ userId: 'local', role: 'admin', auth: false });
      expect(lines.some((l) => /authentication is OFF/.test(l))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('GET /healthz and /openapi.json', () => {
  test('health reports the store; the document describes every route with the request schemas', async () => {
    const h = await startHarness();
    try {
      const health = await h.api('nobody', 'GET', '/healthz');
      expect(health.body).toMatchObject({ status: 'ok', store: 'sqlite' });
      const doc = (await h.api('nobody', 'GET', '/openapi.json')).body;
      expect(doc.openapi).toMatch(/^3\./);
      for (const path of ['/runs', '/runs/{id}/events', '/interactions/{id}/respond', '/permissions/{userId}/{kind}/{rule}', '/audit', '/healthz']) expect(doc.paths).toHaveProperty([path]);
      const start = doc.paths['/runs'].post.requestBody.content['application/json'].schema;
      expect(start.required).toEqual(['task']);
      expect(start.properties.permissionMode.enum).toContain('acceptEdits');
      expect(doc.paths['/interactions/{id}/respond'].post.responses).toHaveProperty(['409']);
      expect(doc.paths['/interactions/{id}/respond'].post.responses).toHaveProperty(['410']);
    } finally {
      await h.close();
    }
  });
});

describe('graceful shutdown', () => {
  test('ends open streams, refuses new work, and leaves the waiting run suspended with its request open', async () => {
    const h = await startHarness();
    const { runId, interactionId } = await startAskingRun(h);
    const sse = new SseClient(`${h.url}/runs/${runId}/events`, { token: TOKENS.alice });
    await sse.waitFor((e) => e.type === 'interaction.requested');
    const store = h.store;
    // Keep the store open past close() to inspect what was left behind.
    const close = store.close.bind(store);
    store.close = async () => {};
    await h.server.close();
    await sse.done;
    const run = await store.getRun(runId);
    expect(run?.status).toBe('suspended');
    expect(run?.owner).toBeNull();
    expect((await store.getInteraction(interactionId))?.status).toBe('pending');
    expect((await store.readEvents(runId)).map((e) => e.type)).toContain('run.suspended');
    await expect(fetch(`${h.url}/healthz`)).rejects.toThrow();
    await close();
  });
});
