import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { axeProblems, buildWeb, launch, skipBrowser, snap, VIEWPORTS } from './browser-support.js';

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
  for (const page of tabs.values()) await page.context().close();
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});

async function signedIn(size: keyof typeof VIEWPORTS, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const ctx = await browser.newContext({ viewport: VIEWPORTS[size], colorScheme });
  await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
  return ctx.newPage();
}

/**
 * One signed-in tab per width, shared by the tests that only move between different pages (each hash
 * route mounts its page anew): a new context and a cold load cost more than most of these tests.
 */
const tabs = new Map<keyof typeof VIEWPORTS, Page>();
async function tab(size: keyof typeof VIEWPORTS): Promise<Page> {
  let page = tabs.get(size);
  if (!page) tabs.set(size, (page = await signedIn(size)));
  return page;
}

const commandScript = (command: string) => [{ text: 'Running it.', toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'Done.' }];

async function startRun(turns: unknown[], task: string): Promise<string> {
  const res = await h.api('alice', 'POST', '/runs', { task, model: h.script(turns) });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe.skipIf(skipBrowser)('inbox, runs, audit, permissions pages', { timeout: 90_000 }, () => {
  for (const size of ['desktop', 'phone'] as const) {
    test(`${size}: the inbox counts and answers a request in place, live; the filtered audit shows the denial with who, channel and the typed reason`, async () => {
      const page = await tab(size);
      await page.goto(`${h.url}/#/inbox`);
      await page.locator('.inbox .empty, .inbox-item').first().waitFor();
      // Arrives over the user stream while the page is open.
      const runId = await startRun(commandScript(`rm -rf build-${size}`), `clean ${size}`);
      const item = page.locator('.inbox-item').filter({ hasText: `rm -rf build-${size}` });
      await item.waitFor();
      await expect(item.locator('strong').textContent()).resolves.toBe('Run a command');
      await page.waitForFunction(() => /^\(\d+\) Sage$/.test(document.title));
      expect(await page.locator('.nav [data-pending-count]').count()).toBe(1);
      await snap(page, `pages-${size}-inbox`);
      await item.locator('button:has-text("Deny…")').click();
      await item.locator('input').fill(`not on ${size}`);
      await item.locator('button[type="submit"]:has-text("Deny")').click();
      await item.waitFor({ state: 'detached' });
      // The denial was sent with its reason (the run may go on to ask for a next message, which is not a confirm).
      const answered = await eventually(async () => (await h.api('alice', 'GET', `/interactions?runId=${runId}&status=answered`)).body.interactions.find((i: { kind: string }) => i.kind === 'confirm'));
      expect(answered.answeredBy).toBe('alice');

      await page.goto(`${h.url}/#/audit`);
      await page.fill('#audit-run', runId);
      await page.selectOption('#audit-decision', 'deny');
      await page.click('.audit-filters button[type="submit"]');
      const row = page.locator('table.audit tbody tr').filter({ hasText: 'Bash' }).first();
      await row.waitFor();
      // The answer's entry says who answered, through which surface, and the reason they typed.
      const text = await row.textContent();
      expect(text).toContain(`said: not on ${size}`);
      expect(text).toContain('by alice');
      expect(text).toContain('via web');
      // On a phone the row is stacked and its "why" is on screen, not off to the right.
      const why = row.locator('td[data-label="Why"]');
      const box = await why.boundingBox();
      expect(box).not.toBeNull();
      expect(box!.x + box!.width).toBeLessThanOrEqual(VIEWPORTS[size].width + 1);
      await snap(page, `pages-${size}-audit`);
    });

    test(`${size}: runs filter by status and search, live; the new-run form offers the server's choices`, async () => {
      const page = await tab(size);
      await page.goto(`${h.url}/#/runs`);
      await page.locator('#run-filter').waitFor();
      const waiting = await startRun(commandScript('git push'), `push ${size}`);
      await page.locator(`[data-run-id="${waiting}"]`).waitFor();
      await page.selectOption('#run-filter', 'waiting');
      await page.locator(`[data-run-id="${waiting}"]`).waitFor();
      await page.fill('#run-search', 'no such task anywhere');
      await page.locator('.run-list .empty:has-text("No run matches")').waitFor();
      await page.fill('#run-search', `push ${size}`);
      await page.locator(`[data-run-id="${waiting}"]`).waitFor();
      // Modes are what the policy allows: bypassPermissions is not among the defaults.
      const modes = await page.locator('#new-mode option').allTextContents();
      expect(modes).toEqual(['default', 'acceptEdits', 'plan', 'dontAsk']);
      await page.selectOption('#new-mode', 'plan');
      await expect(page.locator('#new-mode-help').textContent()).resolves.toMatch(/Reads and plans only/);
      expect(await page.locator('#new-cwd option').count()).toBe(1);
      expect(await page.locator('#new-model-choices option').count()).toBeGreaterThan(0);
      await snap(page, `pages-${size}-runs`);
    });
  }

  test('a rule saved by an "always" answer shows on the open permissions page without a reload', async () => {
    const page = await tab('desktop');
    await page.goto(`${h.url}/#/permissions`);
    await page.locator('[data-list="allow"]').waitFor();
    const runId = await startRun(commandScript('touch always-ok.txt'), 'always');
    const record = await eventually(async () => (await h.api('alice', 'GET', `/interactions?runId=${runId}&status=pending`)).body.interactions[0]);
    const rule = record.request.suggestions?.[0]?.rule as string;
    expect(rule).toBe('Bash(touch always-ok.txt)');
    const res = await h.api('alice', 'POST', `/interactions/${encodeURIComponent(record.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'user', rule });
    expect(res.status).toBe(200);
    await page.locator(`[data-list="allow"] code:has-text("${rule}")`).waitFor();
    await snap(page, 'pages-desktop-permissions-live');
  });

  test('an "always, this run" rule shows on the permissions page with its run, at both widths', async () => {
    const page = await signedIn('desktop');
    await page.goto(`${h.url}/#/permissions`);
    await page.locator('[data-list="session"]').waitFor();
    const turns = [{ text: 'One.', toolCalls: [{ name: 'Bash', input: { command: 'touch session-a.txt' } }] }, { text: 'Two.', toolCalls: [{ name: 'Bash', input: { command: 'touch session-b.txt' } }] }, { text: 'Done.' }];
    const runId = await startRun(turns, 'session rules');
    const record = await eventually(async () => (await h.api('alice', 'GET', `/interactions?runId=${runId}&status=pending`)).body.interactions[0]);
    const rule = record.request.suggestions?.[0]?.rule as string;
    expect(rule).toBe('Bash(touch session-a.txt)');
    expect((await h.api('alice', 'POST', `/interactions/${encodeURIComponent(record.id)}/respond`, { kind: 'confirm', confirmed: true, remember: 'session', rule })).status).toBe(200);
    // The run goes on and asks about the second command: still active, its session rule listed with it.
    const item = page.locator('[data-list="session"] li').filter({ hasText: rule });
    await item.waitFor();
    await expect(item.locator('a').getAttribute('href')).resolves.toBe(`#/runs/${runId}`);
    expect(await page.locator('[data-list="allow"] code').filter({ hasText: rule }).count()).toBe(0);
    await snap(page, 'pages-desktop-permissions-session');
    await page.setViewportSize(VIEWPORTS.phone);
    await snap(page, 'pages-phone-permissions-session');
    await h.api('alice', 'POST', `/runs/${runId}/cancel`, {});
    await page.context().close();
  });

  test('no serious or critical axe violation on the inbox, runs, permissions, audit and chat pages, light and dark', async () => {
    const runId = await startRun(commandScript('ls -la /etc'), 'axe run');
    await eventually(async () => ((await h.api('alice', 'GET', `/interactions?runId=${runId}&status=pending`)).body.interactions.length > 0 ? true : undefined));
    const found: string[] = [];
    // One tab per width; the colour scheme is only CSS (prefers-color-scheme), so switching the
    // emulated media in the same tab shows the page as a tab opened in that scheme would.
    for (const size of ['desktop', 'phone'] as const) {
      const page = await signedIn(size);
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [route, ready] of [
          ['inbox', '.inbox-item'],
          ['runs', '.run-list li'],
          ['permissions', '[data-list="deny"]'],
          ['audit', 'table.audit'],
          [`runs/${runId}`, '[data-interaction]'],
        ] as const) {
          await page.goto(`${h.url}/#/${route}`);
          await page.locator(ready).first().waitFor();
          for (const p of await axeProblems(page)) found.push(`${scheme} ${size} ${route}: ${p}`);
          if (size === 'phone' || route === 'inbox') await snap(page, `pages-axe-${scheme}-${size}-${route.split('/')[0]}`);
        }
      }
      await page.context().close();
    }
    expect(found).toEqual([]);
    // Twenty page loads with axe each: on a loaded 2-core machine that alone took 64 s of the default 90.
  }, 240_000);
});
