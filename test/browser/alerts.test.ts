import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { buildWeb, launch, skipBrowser, snap, VIEWPORTS, type Width } from './browser-support.js';

let h: Harness;
let browser: Browser;
let webRoot: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  h = await startHarness({ webRoot });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});

interface Recorded {
  notes: { title: string; body?: string; tag?: string }[];
  tones: number;
}

/**
 * A signed-in page whose Notification and AudioContext record what the page does with them. The
 * recorder keeps the browser's own permission state (granted by the test through the context), so
 * the page's permission checks run against the real browser answer.
 */
async function recordingPage(size: Width, grant: boolean): Promise<Page> {
  const ctx = await browser.newContext({ viewport: VIEWPORTS[size] });
  if (grant) await ctx.grantPermissions(['notifications'], { origin: h.url });
  await ctx.addInitScript((token) => {
    localStorage.setItem('sage.token', token);
    const w = window as unknown as { __alerts: Recorded; Notification: unknown; AudioContext: typeof AudioContext };
    w.__alerts = { notes: [], tones: 0 };
    const RealNotification = window.Notification;
    w.Notification = class {
      static get permission() {
        return RealNotification.permission;
      }
      static requestPermission() {
        return RealNotification.requestPermission();
      }
      constructor(title: string, options?: NotificationOptions) {
        w.__alerts.notes.push({ title, body: options?.body, tag: options?.tag });
      }
      close() {}
    };
    const RealAudio = window.AudioContext;
    w.AudioContext = class extends RealAudio {
      override createOscillator() {
        const osc = super.createOscillator();
        const start = osc.start.bind(osc);
        osc.start = (when?: number) => {
          w.__alerts.tones++;
          start(when);
        };
        return osc;
      }
    };
  }, TOKENS.alice);
  return ctx.newPage();
}

const recorded = (page: Page) => page.evaluate(() => (window as unknown as { __alerts: Recorded }).__alerts);

async function startApproval(command: string): Promise<{ runId: string; interactionId: string }> {
  const res = await h.api('alice', 'POST', '/runs', { task: command, model: h.script([{ text: 'Running it.', toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'Done.' }]) });
  expect(res.status).toBe(201);
  const runId = res.body.id as string;
  const record = await eventually(async () => (await h.api('alice', 'GET', `/interactions?runId=${runId}&status=pending`)).body.interactions[0]);
  return { runId, interactionId: record.id as string };
}

describe.skipIf(skipBrowser)('desktop notifications and sound for new requests', { timeout: 90_000 }, () => {
  for (const size of ['desktop', 'phone'] as const) {
    test(`${size}: opted in, a new pending approval gives one notification; the sound plays only when turned on`, async () => {
      // Already waiting when the page opens: the person sees it in the list, it is not announced.
      const before = await startApproval(`touch before-${size}.txt`);
      const page = await recordingPage(size, true);
      await page.goto(`${h.url}/#/inbox`);
      await page.locator('.inbox-item').filter({ hasText: `touch before-${size}.txt` }).waitFor();
      // Turned on only after the browser's permission answer (async): wait for the box to show it.
      await page.getByLabel('Show a desktop notification').click();
      await page.getByRole('checkbox', { name: 'Show a desktop notification', checked: true }).waitFor();
      expect(await page.locator('.alert-settings p.meta').count()).toBe(0);

      const first = await startApproval(`touch first-${size}.txt`);
      await page.locator('.inbox-item').filter({ hasText: `touch first-${size}.txt` }).waitFor();
      await page.waitForFunction(() => (window as unknown as { __alerts: Recorded }).__alerts.notes.length > 0);
      let seen = await recorded(page);
      expect(seen.notes).toEqual([{ title: 'Sage: Run a command', body: `touch first-${size}.txt`, tag: first.interactionId }]);
      // announce() notifies and plays in one go: with the sound off nothing played.
      expect(seen.tones).toBe(0);
      await snap(page, `alerts-${size}-notified`);

      await page.getByLabel('Play a sound').click();
      await page.getByRole('checkbox', { name: 'Play a sound', checked: true }).waitFor();
      const second = await startApproval(`touch second-${size}.txt`);
      await page.locator('.inbox-item').filter({ hasText: `touch second-${size}.txt` }).waitFor();
      await page.waitForFunction(() => (window as unknown as { __alerts: Recorded }).__alerts.notes.length > 1);
      seen = await recorded(page);
      // One notification per new request: the earlier ones are not announced again.
      expect(seen.notes.map((n) => n.tag)).toEqual([first.interactionId, second.interactionId]);
      expect(seen.tones).toBe(1);

      // The choice is kept for the next visit (localStorage), and answering sends nothing new.
      await page.reload();
      await page.locator('.inbox-item').first().waitFor();
      await expect(page.getByLabel('Show a desktop notification').isChecked()).resolves.toBe(true);
      await expect(page.getByLabel('Play a sound').isChecked()).resolves.toBe(true);
      await snap(page, `alerts-${size}-settings`);
      for (const { runId } of [before, first, second]) await h.api('alice', 'POST', `/runs/${runId}/cancel`, {});
      await page.context().close();
    });
  }

  test('without the browser permission, turning notifications on says they are blocked and none is shown', async () => {
    const page = await recordingPage('desktop', false);
    await page.goto(`${h.url}/#/inbox`);
    await page.locator('.alert-settings').waitFor();
    // Headless Chromium answers a permission request nobody grants with "denied".
    await page.getByLabel('Show a desktop notification').click();
    await page.locator('.alert-settings p.meta').filter({ hasText: 'blocked' }).waitFor();
    await expect(page.getByLabel('Show a desktop notification').isChecked()).resolves.toBe(false);
    const { runId } = await startApproval('touch blocked.txt');
    await page.locator('.inbox-item').filter({ hasText: 'touch blocked.txt' }).waitFor();
    // The nav count is updated by the same list that announces: once it shows, announce() has run.
    await page.waitForFunction(() => /^\(\d+\) Sage$/.test(document.title));
    expect((await recorded(page)).notes).toEqual([]);
    await snap(page, 'alerts-desktop-blocked');
    await h.api('alice', 'POST', `/runs/${runId}/cancel`, {});
    await page.context().close();
  });
});
