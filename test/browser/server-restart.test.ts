import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunDriver } from '../../src/server/durable-driver.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { eventually, TOKENS } from '../../src/server/test-support/harness.js';
import { openSqliteStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/index.js';
import { buildWeb, launch, skipBrowser, snap } from './browser-support.js';

let browser: Browser;
let webRoot: string;
let dir: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  dir = mkdtempSync(join(tmpdir(), 'sage-restart-'));
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const d of [webRoot, dir]) if (d) rmSync(d, { recursive: true, force: true });
});

async function serve(store: Store, port: number): Promise<RunningServer> {
  const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
  return startServer({ store, driver, port, tokens: `${TOKENS.alice}=alice`, env: {}, logger: pino({ level: 'silent' }), webRoot });
}

describe.skipIf(skipBrowser)('the page across a server restart', { timeout: 60_000 }, () => {
  test('the stream drops, the page reconnects with Last-Event-ID, shows what happened meanwhile, once', async () => {
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ text: 'Writing it.', toolCalls: [{ name: 'Write', input: { file_path: 'r.txt', content: 'r' } }] }, { text: 'The file is written.' }] }));
    const first = await serve(store, 0);
    const port = first.port;
    const res = await fetch(`${first.url}/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' }, body: JSON.stringify({ task: 'survive a restart', model: `scripted:${script}` }) });
    const run = (await res.json()) as { id: string };

    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    await context.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
    const page = await context.newPage();
    await page.goto(`${first.url}/#/runs/${run.id}`);
    await page.locator('[data-interaction]').waitFor();
    await page.locator('[data-stream="live"]').waitFor();

    await first.close();
    await page.locator('[data-stream="reconnecting"]').waitFor();
    await snap(page, '18-restart-reconnecting');

    const second = await serve(store, port);
    try {
      // Answered while the page is (probably) still away: it must catch up from its Last-Event-ID.
      const ask = (await store.listInteractions({ runId: run.id, status: ['pending'] }))[0]!;
      const answered = await fetch(`${second.url}/interactions/${encodeURIComponent(ask.id)}/respond`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'confirm', confirmed: true }) });
      expect(answered.status).toBe(200);
      await page.locator('[data-interaction]').waitFor({ state: 'detached' });
      await page.locator('[data-testid="assistant-text"]:has-text("The file is written.")').waitFor();
      await page.locator('[data-stream="live"]').waitFor();
      await snap(page, '19-restart-caught-up');
      expect(await page.locator('[data-tool-call]').count()).toBe(1);
      expect(await page.locator('[data-testid="assistant-text"]:has-text("The file is written.")').count()).toBe(1);
      expect(await page.locator('.msg-user').count()).toBe(1);
      await eventually(async () => ((await store.readEvents(run.id)).some((e) => e.type === 'tool.completed') ? true : undefined));
    } finally {
      await context.close();
      await second.close();
      await store.close();
    }
  });
});
