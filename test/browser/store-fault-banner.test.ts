import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { askingScript, eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { switchableStore, type SwitchableStore } from '../../src/server/test-support/switchable-store.js';
import { openSqliteStore } from '../../src/store/open-store.js';
import { axeProblems, buildWeb, launch, skipBrowser, VIEWPORTS, type Width } from './browser-support.js';

let h: Harness;
let sw: SwitchableStore;
let browser: Browser;
let webRoot: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  h = await startHarness({ webRoot, store: async (dir) => (sw = switchableStore(await openSqliteStore(join(dir, 'sage.db')))).store });
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (sw) sw.down = false;
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});

async function open(width: Width, colorScheme: 'light' | 'dark', hash: string): Promise<Page> {
  const ctx = await browser.newContext({ viewport: VIEWPORTS[width], colorScheme });
  await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/${hash}`);
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `/tmp/store-fault-${name}.png`, fullPage: false });
}

const COMBOS: [Width, 'light' | 'dark'][] = [
  ['desktop', 'light'],
  ['desktop', 'dark'],
  ['phone', 'light'],
  ['phone', 'dark'],
];

describe.skipIf(skipBrowser)('the page when the store refuses a send', { timeout: 60_000 }, () => {
  test.each(COMBOS)('%s, %s: the edited answer is kept with a banner, sent again once the store is back, and the tool runs once', async (width, scheme) => {
    const file = `kept-${width}-${scheme}.txt`;
    const started = await h.api('alice', 'POST', '/runs', { task: `write ${file}`, model: h.script(askingScript(file)) });
    expect(started.status).toBe(201);
    const runId = started.body.id as string;
    const page = await open(width, scheme, `#/runs/${encodeURIComponent(runId)}`);
    try {
      const card = page.locator('[data-interaction]');
      await card.getByRole('button', { name: /Edit, then allow/ }).click();
      const edit = card.getByLabel('New content of the file');
      await edit.fill('kept through the outage\n');

      sw.down = true;
      await card.getByRole('button', { name: 'Allow edited input' }).click();
      const banner = page.locator('[data-store-fault="store_unavailable"]');
      await banner.waitFor();
      expect(await banner.textContent()).toContain('The store is unavailable; your answer was kept, send it again');
      expect(await banner.textContent()).toContain('Kept: allow your edited version.');
      expect(await banner.getAttribute('role')).toBe('alert');
      // The person's edit is still in the card, and nothing ran.
      expect(await card.getByLabel('New content of the file').inputValue()).toBe('kept through the outage\n');
      expect(existsSync(join(h.dir, file))).toBe(false);
      expect(sw.refused.get('write')).toBeGreaterThan(0);
      await shot(page, `${width}-${scheme}-unavailable`);
      expect(await axeProblems(page)).toEqual([]);

      sw.down = false;
      // /readyz answers 200 again: the banner says so, and still waits for the person.
      const back = page.locator('[data-store-fault="back"]');
      await back.waitFor();
      expect(await back.textContent()).toContain('The store is back');
      expect(existsSync(join(h.dir, file))).toBe(false);
      await shot(page, `${width}-${scheme}-back`);
      // The run was resumed once the store answered and asks the same request again: the card still holds the edit.
      await eventually(async () => ((await h.store.readEvents(runId)).some((e) => e.type === 'run.resumed') ? true : undefined));
      expect(await page.locator('[data-interaction]').getByLabel('New content of the file').inputValue()).toBe('kept through the outage\n');

      await back.getByRole('button', { name: 'Send again' }).click();
      await page.locator('[data-testid="assistant-text"]:has-text("Done writing.")').waitFor();
      expect(await page.locator('[data-store-fault]').count()).toBe(0);
      expect(readFileSync(join(h.dir, file), 'utf8')).toBe('kept through the outage\n');
      const events = await h.store.readEvents(runId);
      expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'interaction.answered')).toHaveLength(1);
      await shot(page, `${width}-${scheme}-sent`);
    } finally {
      sw.down = false;
      await page.context().close();
    }
  });

  test('a run start the store refuses keeps the task, and "Start again" starts it once the store is back', async () => {
    const page = await open('desktop', 'light', '#/runs');
    try {
      const model = h.script([{ text: 'Started after the outage.' }]);
      await page.getByLabel('Task').fill('start through the outage');
      await page.getByLabel('Model').fill(model);
      const before = (await h.store.listRuns({})).length;
      sw.down = true;
      await page.getByRole('button', { name: 'Start run' }).click();
      const banner = page.locator('[data-store-fault="store_unavailable"]');
      await banner.waitFor();
      expect(await banner.textContent()).toContain('The store is unavailable; the run could not start; your task was kept');
      expect(await page.getByLabel('Task').inputValue()).toBe('start through the outage');
      await shot(page, 'new-run-unavailable');
      sw.down = false;
      await page.locator('[data-store-fault="back"]').getByRole('button', { name: 'Start again' }).click();
      await page.locator('.chat-title:has-text("start through the outage")').waitFor();
      await page.locator('[data-testid="assistant-text"]:has-text("Started after the outage.")').waitFor();
      expect((await h.store.listRuns({})).length).toBe(before + 1);
    } finally {
      sw.down = false;
      await page.context().close();
    }
  });
});
