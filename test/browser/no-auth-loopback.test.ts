import { rmSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startAskingRun, startHarness, type Harness } from '../../src/server/test-support/harness.js';
import { buildWeb, CHROMIUM, launch, skipBrowser } from './browser-support.js';

let h: Harness;
let browser: Browser;
let webRoot: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  h = await startHarness({ webRoot, auth: false });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});

// Issue 10 item 5, in a real browser: the server without tokens serves its own page, and nothing else.
describe.skipIf(skipBrowser)('a no-auth loopback server in Chromium', { timeout: 60_000 }, () => {
  test('its own page works (Runs list, a cancel from the page), since the page sends JSON from its own origin', async () => {
    const { runId } = await startAskingRun(h, 'alice');
    const page = await (await browser.newContext()).newPage();
    await page.goto(h.url);
    await page.waitForSelector('h1:has-text("Runs")');
    const status = await page.evaluate(async (id) => (await fetch(`/runs/${id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, runId);
    expect(status).toBe(200);
    await eventually(async () => ((await h.store.getRun(runId))?.status === 'cancelled' ? true : undefined));
  });

  test('a DNS-rebound name reaches the server but gets 403, and its simple request cancels nothing', async () => {
    const { runId } = await startAskingRun(h, 'alice');
    // attacker.test resolves to 127.0.0.1, as a rebinding attacker's DNS would make it.
    const rebound = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP attacker.test 127.0.0.1'],
    });
    try {
      const page = await (await rebound.newContext()).newPage();
      const port = h.server.port;
      const response = await page.goto(`http://attacker.test:${port}/`);
      expect(response?.status()).toBe(403);
      const attempt = await page.evaluate(
        async (id) => {
          // What a hostile page can send without a CORS preflight: text/plain, no custom headers.
          const res = await fetch(`/runs/${id}/cancel`, { method: 'POST', body: '' });
          return { status: res.status, body: await res.text() };
        },
        runId,
      );
      expect(attempt.status).toBe(403);
      expect(attempt.body).toContain('forbidden_host');
      expect(attempt.body).not.toContain(runId);
    } finally {
      await rebound.close();
    }
    expect((await h.store.getRun(runId))?.status).toBe('running');
  });
});
