import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { DurableRunDriver } from './durable-driver.js';
import { startServer, type RunningServer } from './server.js';
import { eventually, TOKENS } from './test-support/harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function serve(store: Store, dir: string, idleSuspendMs?: number): Promise<RunningServer> {
  const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true, idleSuspendMs });
  return startServer({ store, driver, port: 0, tokens: `${TOKENS.alice}=alice`, env: {}, logger: pino({ level: 'silent' }), webRoot: false });
}

async function call(server: RunningServer, method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'sage-durable-'));
  dirs.push(dir);
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ text: 'writing', toolCalls: [{ name: 'Write', input: { file_path: 'kept.txt', content: 'survived\n' } }] }, { text: 'written' }, { text: 'bye' }] }));
  return { dir, model: `scripted:${script}` };
}

describe('durable runs behind the server', () => {
  test('a server restart loses nothing: the request stays open and its answer, sent to the new server, resumes the run', async () => {
    const { dir, model } = setup();
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const first = await serve(store, dir);
    const { body: run } = await call(first, 'POST', '/runs', { task: 'keep it', model });
    const ask = await eventually(async () => (await store.listInteractions({ runId: run.id, status: ['pending'] }))[0]);
    await first.close();
    expect((await store.getRun(run.id))?.status).toBe('suspended');

    const second = await serve(store, dir);
    try {
      const pending = await call(second, 'GET', `/runs/${run.id}/suspended`);
      expect(pending.body.interaction.id).toBe(ask.id);
      const answered = await call(second, 'POST', `/interactions/${encodeURIComponent(ask.id)}/respond`, { kind: 'confirm', confirmed: true });
      expect(answered.status).toBe(200);
      await eventually(async () => ((await store.readEvents(run.id)).some((e) => e.type === 'tool.completed') ? true : undefined));
      expect(readFileSync(join(dir, 'kept.txt'), 'utf8')).toBe('survived\n');
      const seqs = (await store.readEvents(run.id)).map((e) => e.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    } finally {
      await second.close();
      await store.close();
    }
  });

  test('a run released from memory while it waits is resumed by its answer', async () => {
    const { dir, model } = setup();
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const server = await serve(store, dir, 50);
    try {
      const { body: run } = await call(server, 'POST', '/runs', { task: 'idle', model });
      await eventually(async () => ((await store.getRun(run.id))?.status === 'suspended' ? true : undefined));
      const ask = (await store.listInteractions({ runId: run.id, status: ['pending'] }))[0]!;
      const answered = await call(server, 'POST', `/interactions/${encodeURIComponent(ask.id)}/respond`, { kind: 'confirm', confirmed: true });
      expect(answered.status).toBe(200);
      const done = await eventually(async () => (await store.readEvents(run.id)).find((e) => e.type === 'tool.completed'));
      expect(done.data).toMatchObject({ isError: false });
      expect((await store.readEvents(run.id)).map((e) => e.type)).toContain('run.resumed');
    } finally {
      await server.close();
      await store.close();
    }
  });
});
