import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, type Harness } from './test-support/harness.js';

/**
 * MCP servers from the web: a run started through POST /runs gets the MCP servers the HOST configured
 * (its user settings), under the same gate as any tool — a host deny rule on the destructive tool
 * holds — and the plain tool's result reaches the run. A client cannot name a server.
 */
const testServer = fileURLToPath(new URL('../mcp/test-support/test-server.mjs', import.meta.url));
let home: string;
let h: Harness;

beforeAll(async () => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'sage-web-mcp-')));
  mkdirSync(join(home, '.sage'), { recursive: true });
  writeFileSync(
    join(home, '.sage', 'settings.json'),
    JSON.stringify({ mcpServers: { records: { command: process.execPath, args: [testServer] } }, permissions: { deny: ['mcp__records__delete_record'] } }),
  );
  h = await startHarness({ home });
});
afterAll(async () => {
  await h?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('a web run with the host\'s MCP servers', { timeout: 30_000 }, () => {
  test('the plain tool answers, the destructive one is denied by the host rule, and a client cannot add a server', async () => {
    const model = h.script([
      { toolCalls: [{ name: 'mcp__records__echo', input: { text: 'hello from the web' } }, { name: 'mcp__records__delete_record', input: { id: '7' } }] },
      { text: 'done' },
    ]);
    const started = await h.api('alice', 'POST', '/runs', { task: 'use the records server', model });
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    // The host's allow rules are not a web run's (server policy): the echo call is asked, and approved here.
    const ask = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] })).find((i) => i.kind === 'confirm'), 20_000);
    expect(ask.request).toMatchObject({ toolName: 'mcp__records__echo' });
    expect((await h.api('alice', 'POST', `/interactions/${encodeURIComponent(ask.id)}/respond`, { kind: 'confirm', confirmed: true })).status).toBe(200);
    const results = await eventually(async () => {
      const events = await h.store.readEvents(runId);
      const done = events.filter((e) => e.type === 'tool.completed');
      return done.length === 2 ? done : undefined;
    }, 20_000);
    const byName = Object.fromEntries(results.map((e) => [(e.data as { toolName: string }).toolName, e.data as { content: string; isError: boolean }]));
    expect(byName['mcp__records__echo']).toMatchObject({ isError: false, content: expect.stringContaining('hello from the web') });
    expect(byName['mcp__records__delete_record']?.isError).toBe(true);
    const decided = (await h.store.readEvents(runId)).find((e) => e.type === 'permission.decided' && (e.data as { toolName: string }).toolName === 'mcp__records__delete_record');
    expect(decided?.data).toMatchObject({ behavior: 'deny' });
    const refused = await h.api('alice', 'POST', '/runs', { task: 'x', model, mcpServers: { evil: { command: 'sh' } } });
    expect(refused.status).toBe(400);
  });
});
