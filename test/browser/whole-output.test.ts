import { readFileSync, rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { axeProblems, buildWeb, launch, skipBrowser, snap, VIEWPORTS, type Width } from './browser-support.js';

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

/** What `seq 1 30000` prints and the tool adds: 168,894 characters, far over the 30,000 the agent gets. */
const WHOLE = `${Array.from({ length: 30000 }, (_, i) => String(i + 1)).join('\n')}\nExit code: 0`;

async function open(runId: string, width: Width): Promise<Page> {
  const ctx = await browser.newContext({ viewport: VIEWPORTS[width], acceptDownloads: true });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.url });
  await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/#/runs/${runId}`);
  return page;
}

describe.skipIf(skipBrowser)('the whole output of a command the agent saw cut', { timeout: 90_000 }, () => {
  for (const width of ['desktop', 'phone'] as const) {
    test(`${width}: the card says it was cut; show all, copy and download give every byte`, async () => {
      // seq only prints: the gate allows it without asking.
      const res = await h.api('alice', 'POST', '/runs', { task: `print a lot (${width})`, model: h.script([{ text: 'Printing.', toolCalls: [{ name: 'Bash', input: { command: 'seq 1 30000' } }] }, { text: 'Printed.' }]) });
      const runId = res.body.id as string;
      const completed = await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed'));
      const agentSaw = (completed.data as { content: string }).content;
      expect(agentSaw).toContain('characters truncated');
      expect(agentSaw).not.toContain('\n15000\n');

      const page = await open(runId, width);
      const card = page.locator('[data-tool-call][data-tool-state="done"]');
      await card.waitFor();
      await expect(card.locator('[data-output-cut]').getAttribute('data-output-cut')).resolves.toBe(String(WHOLE.length));
      await card.locator('summary').click();
      await expect(card.locator('summary').textContent()).resolves.toContain('(cut)');
      await snap(page, `whole-output-${width}-cut`);
      expect(await axeProblems(page)).toEqual([]);

      // Download: the file is the whole output, byte for byte, not the agent's copy.
      const [download] = await Promise.all([page.waitForEvent('download'), card.locator('button:has-text("Download all")').click()]);
      expect(download.suggestedFilename()).toMatch(/^Bash-.+\.txt$/);
      expect(readFileSync((await download.path())!, 'utf8')).toBe(WHOLE);

      // Shown: all 30,001 lines, including the middle the agent never saw.
      await card.locator('[data-output-whole="loaded"]').waitFor();
      await expect(card.locator('summary').textContent()).resolves.toContain('30,001 lines');
      await card.locator('button:has-text("Show all 30,001 lines")').click();
      await expect(card.locator('pre.output-all').textContent()).resolves.toBe(WHOLE);

      // Copy: the whole text on the clipboard.
      await card.locator('button:has-text("Copy all")').click();
      await card.locator('[role="status"]').filter({ hasText: `Copied all ${WHOLE.length.toLocaleString('en')} characters.` }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(WHOLE);
      await card.locator('button:has-text("Show pages")').click();
      await snap(page, `whole-output-${width}-loaded`);
      expect(await axeProblems(page)).toEqual([]);
      await page.context().close();
    });
  }
});
