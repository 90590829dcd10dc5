import { readFileSync, rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { builtinTools } from '../../src/tool/builtin/index.js';
import { buildWeb, launch, showRun, skipBrowser, snap, VIEWPORTS, type Width } from './browser-support.js';

let h: Harness;
let browser: Browser;
let webRoot: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  h = await startHarness({ webRoot, tools: () => builtinTools() });
  browser = await launch();
}, 120_000);

afterAll(async () => {
  for (const page of tabs.values()) await page.context().close();
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});


async function open(runId: string, width: Width, permissions: string[] = []): Promise<Page> {
  const ctx = await browser.newContext({ viewport: VIEWPORTS[width], acceptDownloads: true });
  if (permissions.length > 0) await ctx.grantPermissions(permissions, { origin: h.url });
  await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/#/runs/${runId}`);
  return page;
}

/**
 * One tab per width, shared by the tests that intercept no request (clipboard granted for the output
 * test, downloads accepted): it follows the hash route to each run instead of a new context and a cold load.
 */
const tabs = new Map<Width, Page>();
async function shared(runId: string, width: Width): Promise<Page> {
  let page = tabs.get(width);
  if (!page) {
    const ctx = await browser.newContext({ viewport: VIEWPORTS[width], acceptDownloads: true });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.url });
    await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
    tabs.set(width, (page = await ctx.newPage()));
  }
  await showRun(page, h.url, runId);
  return page;
}

async function startRun(turns: unknown[], task = 'do it'): Promise<string> {
  const res = await h.api('alice', 'POST', '/runs', { task, model: h.script(turns) });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const ask = (page: Page) => page.locator('[data-interaction]');
const longText = (lines: number) => Array.from({ length: lines }, (_, i) => `Step ${i + 1} of my plan, explained at some length.`).join('\n');

/** The run's events as the server's SSE would send them, frozen at this moment. */
async function frozenStream(runId: string): Promise<string> {
  const events = await h.store.readEvents(runId);
  return events.map((e) => `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

describe.skipIf(skipBrowser).each(['desktop', 'phone'] as const)('the chat page at %s width', { timeout: 120_000 }, (width) => {
  test('after answering, focus goes to the reply box and the newest message is not under it (live and after reload)', async () => {
    const runId = await startRun([{ text: longText(30), toolCalls: [{ name: 'Bash', input: { command: `touch focus-${width}.txt` } }] }, { text: 'All done, the file exists.' }, { text: 'Second answer.' }]);
    const page = await shared(runId, width);
    await ask(page).waitFor();
    await page.waitForFunction(() => document.activeElement?.textContent?.includes('Allow once'));
    await page.keyboard.press('y');
    await page.waitForFunction(() => document.activeElement?.id === 'composer-text');
    // Only new messages are announced: the timeline itself is no live region.
    expect(await page.locator('.timeline').getAttribute('aria-live')).toBeNull();
    await page.locator('[aria-live="polite"]:has-text("All done, the file exists.")').waitFor({ state: 'attached' });
    const newestAboveComposer = async () => {
      const last = await page.locator('.msg-assistant').last().boundingBox();
      const composer = await page.locator('.composer').boundingBox();
      return last !== null && composer !== null && last.y + last.height <= composer.y + 0.5 && last.y >= 0;
    };
    await expect(newestAboveComposer()).resolves.toBe(true);
    await page.screenshot({ path: `test-artifacts/browser/chat-newest-above-composer-${width}.png` });
    await page.reload();
    await page.locator('.composer textarea').waitFor();
    await page.locator('.msg-assistant:has-text("All done, the file exists.")').waitFor();
    await eventually(async () => ((await newestAboveComposer()) ? true : undefined));
    await page.screenshot({ path: `test-artifacts/browser/chat-newest-after-reload-${width}.png` });
    await page.fill('#composer-text', 'one more thing');
    await page.keyboard.press('Enter');
    await page.locator('[aria-live="polite"]:has-text("Second answer.")').waitFor({ state: 'attached' });
  });

  test('a request scrolled out of view gets a sticky bar (desktop); a phone gets the sheet', async () => {
    const runId = await startRun([{ text: longText(60), toolCalls: [{ name: 'Bash', input: { command: `touch sticky-${width}.txt` } }] }, { text: 'ok' }]);
    const page = await shared(runId, width);
    await ask(page).waitFor();
    if (width === 'phone') {
      await page.locator('[role="dialog"]').waitFor();
      expect(await page.locator('[data-testid="approval-bar"]').count()).toBe(0);
      await snap(page, 'chat-sticky-phone-sheet');
    } else {
      await page.evaluate(() => window.scrollTo(0, 0));
      const bar = page.locator('[data-testid="approval-bar"]');
      await bar.waitFor();
      await expect(bar.textContent()).resolves.toContain('Allow Bash?');
      await page.screenshot({ path: 'test-artifacts/browser/chat-sticky-bar-desktop.png' });
      await bar.locator('button:has-text("Show")').click();
      await bar.waitFor({ state: 'detached' });
      expect(await page.evaluate(() => !!document.activeElement?.closest('[data-interaction]'))).toBe(true);
    }
    await page.keyboard.press('n');
    await page.locator('[data-tool-state="denied"]').waitFor();
  });

  test('output: a short result is open; a long one is paged, shows all on demand, copies and downloads', async () => {
    const runId = await startRun([{ text: 'Two commands.', toolCalls: [{ name: 'Bash', input: { command: 'echo short-result' } }] }, { text: 'Now a long one.', toolCalls: [{ name: 'Bash', input: { command: 'seq 1 3000' } }] }, { text: 'ok' }]);
    const page = await shared(runId, width);
    // Read-only commands run without asking; answer an ask all the same if the policy makes one.
    for (let i = 0; i < 2; i++) {
      await page.locator('[data-tool-state="done"], [data-interaction]').nth(i).waitFor();
      if ((await ask(page).count()) > 0) await ask(page).locator('button:has-text("Allow once")').click();
    }
    const short = page.locator('[data-output="short"]').first();
    await expect(short.locator('pre').isVisible()).resolves.toBe(true);
    await expect(short.locator('pre').textContent()).resolves.toContain('short-result');
    const long = page.locator('[data-output="long"]');
    await long.waitFor();
    await long.locator('summary').click();
    await expect(long.locator('.output-pager .meta').textContent()).resolves.toMatch(/^Lines 1–200 of \d+$/);
    expect(await long.locator('pre').textContent()).not.toContain('\n2999\n');
    await long.locator('button:has-text("Next page")').click();
    await expect(long.locator('.output-pager .meta').textContent()).resolves.toMatch(/^Lines 201–400 of /);
    await long.locator('button:has-text("Show all")').click();
    await expect(long.locator('pre').textContent()).resolves.toContain('\n2999\n3000');
    await snap(page, `chat-output-${width}`);
    const [download] = await Promise.all([page.waitForEvent('download'), long.locator('button:has-text("Download")').click()]);
    expect(download.suggestedFilename()).toMatch(/^Bash-.+\.txt$/);
    expect(readFileSync((await download.path())!, 'utf8')).toContain('\n2999\n3000');
    await long.locator('button:has-text("Copy")').click();
    await long.locator('[role="status"]:has-text("Copied.")').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('\n2999\n3000');
  });

  test('a stale tab: the 409 says who answered and when, in words; the page then catches up', async () => {
    const runId = await startRun([{ text: 'Writing.', toolCalls: [{ name: 'Bash', input: { command: `touch stale-${width}.txt` } }] }, { text: 'ok' }]);
    const interaction = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'], limit: 5 })).find((i) => i.kind === 'confirm'));
    const ctx = await browser.newContext({ viewport: VIEWPORTS[width] });
    await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
    const page = await ctx.newPage();
    // This tab's event stream is frozen before the answer: it never hears of the answer given elsewhere.
    const frozen = await frozenStream(runId);
    await page.route('**/runs/*/events', (route) => route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: frozen }));
    await page.goto(`${h.url}/#/runs/${runId}`);
    await ask(page).waitFor();
    const answered = await h.api('alice', 'POST', `/interactions/${encodeURIComponent(interaction.id)}/respond`, { kind: 'confirm', confirmed: true });
    expect(answered.status).toBeLessThan(300);
    await ask(page).locator('button:has-text("Allow once")').click();
    const alert = ask(page).locator('[role="alert"]');
    await expect(alert.textContent()).resolves.toMatch(/^Already answered by alice (just now|\d+ seconds? ago) \(in another tab or window\)/);
    expect(await alert.textContent()).not.toContain(interaction.id);
    expect(await alert.textContent()).not.toMatch(/\d{4}-\d\d-\d\dT/);
    await snap(page, `chat-stale-409-${width}`);
    await page.unroute('**/runs/*/events');
    await ask(page).waitFor({ state: 'detached' });
    await ctx.close();
  });

  test('"Failed to fetch" clears once the server answers again; the answer then goes through', async () => {
    const runId = await startRun([{ text: 'Writing.', toolCalls: [{ name: 'Bash', input: { command: `touch offline-${width}.txt` } }] }, { text: 'ok' }]);
    const page = await open(runId, width);
    await ask(page).waitFor();
    await page.route('**/interactions/*/respond', (route) => route.abort('internetdisconnected'));
    await page.route('**/healthz', (route) => route.abort('internetdisconnected'));
    await ask(page).locator('button:has-text("Allow once")').click();
    const alert = ask(page).locator('[role="alert"]');
    await expect(alert.textContent()).resolves.toContain('Could not reach the server');
    await snap(page, `chat-offline-${width}`);
    await page.unroute('**/interactions/*/respond');
    await page.unroute('**/healthz');
    await alert.waitFor({ state: 'detached' });
    await ask(page).locator('button:has-text("Allow once")').click();
    await page.locator('[data-tool-state="done"]').waitFor();
    // The reply box too: its offline error goes once the server is back.
    await page.locator('#composer-text').waitFor();
    await page.route('**/interactions/*/respond', (route) => route.abort('internetdisconnected'));
    await page.route('**/healthz', (route) => route.abort('internetdisconnected'));
    await page.fill('#composer-text', 'are you there?');
    await page.keyboard.press('Enter');
    const composerAlert = page.locator('.composer [role="alert"]');
    await expect(composerAlert.textContent()).resolves.toContain('Could not reach the server');
    await page.unroute('**/healthz');
    await composerAlert.waitFor({ state: 'detached' });
    await page.context().close();
  });
});
