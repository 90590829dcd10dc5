import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startAskingRun, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
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
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});

describe.skipIf(skipBrowser)('the runs list in Chromium', { timeout: 60_000 }, () => {
  test('shows the true status: waiting for approval, idle, completed, cancelled', async () => {
    const approval = await startAskingRun(h);
    const start = async (task: string) => (await h.api('alice', 'POST', '/runs', { task, model: h.script([{ text: 'Answered.' }]) })).body.id as string;
    const idle = await start('answer and wait');
    const completed = await start('answer and close');
    const cancelled = await start('answer and cancel');
    for (const id of [idle, completed, cancelled]) await eventually(async () => ((await h.store.getRun(id))?.status === 'idle' ? true : undefined));
    expect((await h.api('alice', 'POST', `/runs/${completed}/close`)).body.status).toBe('completed');
    await h.api('alice', 'POST', `/runs/${cancelled}/cancel`);

    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    await context.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
    const page = await context.newPage();
    await page.goto(h.url);
    const badge = (id: string) => page.locator(`[data-run-id="${id}"] .badge`);
    await badge(approval.runId).waitFor();
    await expect(badge(approval.runId).textContent()).resolves.toBe('waiting for approval');
    await expect(badge(approval.runId).getAttribute('data-status')).resolves.toBe('waiting');
    await expect(badge(idle).textContent()).resolves.toBe('idle');
    await expect(badge(completed).textContent()).resolves.toBe('completed');
    await expect(badge(cancelled).textContent()).resolves.toBe('cancelled');
    await snap(page, 'runs-list-status');

    // The chat page of an idle run says idle too.
    await page.click(`[data-run-id="${idle}"]`);
    await page.locator('.chat-head [data-status="idle"]').waitFor();
    await context.close();
    await h.api('alice', 'POST', `/runs/${approval.runId}/cancel`);
  });

  test('the completed and failed badges pass axe (colour contrast) in dark mode and in light, at both widths', async () => {
    const completed = (await h.api('alice', 'POST', '/runs', { task: 'finish in the dark', model: h.script([{ text: 'Answered.' }]) })).body.id as string;
    // A tool call and no further turn: the script runs out, the model call fails, and so does the run.
    const failed = (await h.api('alice', 'POST', '/runs', { task: 'fail in the dark', model: h.script([{ text: 'Trying.', toolCalls: [{ name: 'NoSuchTool', input: {} }] }]) })).body.id as string;
    await eventually(async () => ((await h.store.getRun(completed))?.status === 'idle' ? true : undefined));
    expect((await h.api('alice', 'POST', `/runs/${completed}/close`)).body.status).toBe('completed');
    await eventually(async () => ((await h.store.getRun(failed))?.status === 'failed' ? true : undefined));

    const found: string[] = [];
    for (const size of ['desktop', 'phone'] as const) {
      const context = await browser.newContext({ viewport: VIEWPORTS[size] });
      await context.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
      const page = await context.newPage();
      for (const scheme of ['dark', 'light'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(`${h.url}/#/runs`);
        await page.locator(`[data-run-id="${completed}"] .badge[data-status="completed"]`).waitFor();
        await page.locator(`[data-run-id="${failed}"] .badge[data-status="failed"]`).waitFor();
        for (const p of await axeProblems(page)) found.push(`${scheme} ${size}: ${p}`);
        await snap(page, `runs-list-badges-${scheme}-${size}`);
      }
      await context.close();
    }
    expect(found).toEqual([]);
  });
});
