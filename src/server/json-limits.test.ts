import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgresStore, openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../store/test-support/postgres-test-db.js';
import { DurableRunDriver } from './durable-driver.js';
import { assertCleanStrings, assertJsonDepth, MAX_JSON_DEPTH } from './json-limits.js';
import { startServer, type RunningServer } from './server.js';
import { askingScript, enc, eventually, TOKENS } from './test-support/harness.js';

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('assertJsonDepth', () => {
  test('lets 64 levels through and refuses 65, counting only brackets outside strings', () => {
    expect(() => assertJsonDepth(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => assertJsonDepth(nested(MAX_JSON_DEPTH + 1))).toThrowError(expect.objectContaining({ code: 'invalid_input', field: 'body' }));
    expect(() => assertJsonDepth(JSON.stringify({ s: '['.repeat(1_000) + '\\"{{{' }))).not.toThrow();
    expect(() => assertJsonDepth('['.repeat(100_000))).toThrow(/deeper than 64/);
  });
});

describe('assertCleanStrings', () => {
  test.each([
    [{ task: 'a\u0000b' }, 'task', /NUL/],
    [{ list: ['ok', 'x\u0000'] }, 'list.1', /NUL/],
    [{ a: { b: '\ud800' } }, 'a.b', /lone surrogate/],
    [{ a: { b: 'x\udfffy' } }, 'a.b', /lone surrogate/],
    [{ a: { ['k\u0000']: 1 } }, 'a', /a key in a contains a NUL/],
  ])('refuses %j naming %s', (value, field, why) => {
    expect(() => assertCleanStrings(value)).toThrowError(expect.objectContaining({ code: 'invalid_input', field, message: expect.stringMatching(why) }));
  });
  test('accepts paired surrogates, newlines and tabs', () => {
    expect(() => assertCleanStrings({ task: 'emoji 😀 \n\t ok', nested: [{ x: '𝒳' }] })).not.toThrow();
  });
});

interface Backend {
  name: string;
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

const schema = testSchemaName('lim');
const backends: Backend[] = [
  { name: 'sqlite', open: async () => openSqliteStore(join(mkdtempSync(join(tmpdir(), 'sage-limits-db-')), 'sage.db')), cleanup: async () => {} },
  { name: 'postgres', open: async () => openPostgresStore(TEST_DATABASE_URL, { schema }), cleanup: () => dropSchema(schema) },
];

describe.each(backends)('bodies the store could not hold ($name): 400, never 500', (backend) => {
  let dir: string;
  let store: Store;
  let server: RunningServer;
  const call = async (method: string, path: string, body?: string) => {
    const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' }, body });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const script = (name: string, turns: unknown[]) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify({ turns }));
    return `scripted:${file}`;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sage-limits-'));
    store = await backend.open();
    const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
    server = await startServer({ store, driver, port: 0, tokens: `${TOKENS.alice}=alice`, env: {}, logger: pino({ level: 'silent' }), webRoot: false, closeStore: true });
  });
  afterAll(async () => {
    await server.close();
    await backend.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a NUL or a lone surrogate in a task is refused with the field, and no run is stored', async () => {
    const model = script('hi.json', [{ text: 'hi' }]);
    for (const task of ['"do \\u0000 this"', '"half \\ud800 a pair"', '"\\udc00"']) {
      const res = await call('POST', '/runs', `{"task": ${task}, "model": ${JSON.stringify(model)}}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_input', field: 'task' });
    }
    const rule = await call('POST', '/runs', JSON.stringify({ task: 'ok', model, deny: ['Bash(rm\u0000 *)'] }));
    expect(rule.status).toBe(400);
    expect(rule.body.error.field).toBe('deny.0');
    expect(await store.listRuns({ userId: 'alice' })).toEqual([]);
  });

  test('a 5,000-deep updatedInput is refused before parsing; the request stays pending', async () => {
    const started = await call('POST', '/runs', JSON.stringify({ task: 'write', model: script('ask.json', askingScript()) }));
    expect(started.status).toBe(201);
    const id = await eventually(async () => (await store.listInteractions({ runId: started.body.id, status: ['pending'] }))[0]?.id);
    const deep = `{"kind":"confirm","confirmed":true,"updatedInput":${nested(5_000)}}`;
    const res = await call('POST', `/interactions/${enc(id)}/respond`, deep);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_input', field: 'body', message: expect.stringMatching(/deeper than 64/) });
    const nul = await call('POST', `/interactions/${enc(id)}/respond`, JSON.stringify({ kind: 'confirm', confirmed: false, message: 'no\u0000' }));
    expect(nul.status).toBe(400);
    expect(nul.body.error.field).toBe('message');
    expect((await store.getInteraction(id))?.status).toBe('pending');
  });

  test('a NUL in a path id or a query is a 400, not a store error', async () => {
    for (const path of ['/runs/run%00x', '/interactions/%00', '/runs?userId=%00', '/interactions?runId=a%00b', '/audit?runId=%ED%A0%80', '/runs/%E0%A4%A']) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
    }
  });

  test('an id longer than 128 characters is refused at the route and never echoed', async () => {
    const long = 'r'.repeat(5_000);
    for (const path of [`/runs/${long}`, `/runs/${long}/events`, `/interactions/${long}`, `/permissions/${long}`]) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(400);
      expect(JSON.stringify(res.body)).not.toContain('r'.repeat(129));
    }
    const respond = await call('POST', `/interactions/${long}/respond`, '{"kind":"confirm","confirmed":true}');
    expect(respond.status).toBe(400);
    expect(JSON.stringify(respond.body)).not.toContain('r'.repeat(129));
    const query = await call('GET', `/interactions?runId=${long}`);
    expect(query.status).toBe(400);
    expect(JSON.stringify(query.body)).not.toContain('r'.repeat(129));
  });
});
