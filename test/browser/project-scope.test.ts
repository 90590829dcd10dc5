import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { trustFolder } from '../../src/permission/index.js';
import { eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { axeProblems, buildWeb, launch, skipBrowser, snap, VIEWPORTS, type Width } from './browser-support.js';

let h: Harness;
let browser: Browser;
let webRoot: string;
let home: string;

beforeAll(async () => {
  if (skipBrowser) return;
  home = mkdtempSync(join(tmpdir(), 'sage-home-'));
  webRoot = await buildWeb();
  h = await startHarness({ webRoot, home });
  // The runs work in the harness folder; the host trusts it, so its project rules apply.
  trustFolder(home, realpathSync(h.dir));
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
  if (home) rmSync(home, { recursive: true, force: true });
});

/** A signed-in tab; with `beside`, a second tab of the same browser session (a new context costs more than the tab). */
async function pageAs(who: 'alice' | 'carol', width: Width, route: string, beside?: Page): Promise<Page> {
  const ctx = beside?.context() ?? (await browser.newContext({ viewport: VIEWPORTS[width] }));
  if (!beside) await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS[who]);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/#/${route}`);
  return page;
}

async function startRun(who: 'alice' | 'carol', command: string): Promise<string> {
  const res = await h.api(who, 'POST', '/runs', { task: command, model: h.script([{ text: 'Running a command.', toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'Done.' }]) });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** The pending request: inline in the timeline on a desktop, the bottom sheet on a phone. */
const ask = (page: Page) => page.locator('[data-interaction]');
const projectButton = (page: Page) => ask(page).locator('button[data-scope="project"]');

describe.skipIf(skipBrowser)('"Always" for this project (.sage/settings.local.json)', { timeout: 90_000 }, () => {
  for (const width of ['desktop', 'phone'] as const) {
    test(`${width}: an admin saves the rule for the project; it shows at once on the open permissions page and a new run is not asked`, async () => {
      const command = `touch project-${width}.txt`;
      const rule = `Bash(${command})`;
      const permissions = await pageAs('carol', width, 'permissions');
      await permissions.locator('[data-list="project"]').waitFor();

      const runId = await startRun('carol', command);
      const page = await pageAs('carol', width, `runs/${runId}`, permissions);
      await ask(page).locator('button:has-text("Allow always")').click();
      // Each scope with the exact rule; the project one names the file it writes.
      await expect(ask(page).locator('.rules li').allTextContents()).resolves.toEqual([rule]);
      await expect(projectButton(page).isEnabled()).resolves.toBe(true);
      const file = join(realpathSync(h.dir), '.sage', 'settings.local.json');
      await expect(ask(page).locator('.scope-note').textContent()).resolves.toBe(`Saved to ${file}`);
      await snap(page, `project-scope-${width}-choice`);
      expect(await axeProblems(page)).toEqual([]);
      await projectButton(page).click();
      await page.locator('[data-tool-state="done"]').waitFor();
      expect(JSON.parse(readFileSync(file, 'utf8')).permissions.allow).toContain(rule);

      // The permissions page, open in another tab, lists it without a reload.
      await permissions.locator('[data-list="project"] li').filter({ hasText: rule }).waitFor();
      await expect(permissions.locator('[data-list="project"] li').filter({ hasText: rule }).textContent()).resolves.toContain(file);
      await snap(permissions, `project-scope-${width}-permissions`);
      expect(await axeProblems(permissions)).toEqual([]);

      // Another user's new run in the same folder: allowed by the project rule, no one asked.
      const next = await startRun('alice', command);
      const decided = await eventually(async () => (await h.store.readEvents(next)).find((e) => e.type === 'permission.decided'));
      expect(decided.data).toMatchObject({ behavior: 'allow', rule });
      await eventually(async () => (await h.store.readEvents(next)).find((e) => e.type === 'tool.completed'));
      expect((await h.store.listInteractions({ runId: next })).filter((r) => r.kind === 'confirm')).toEqual([]);
      for (const id of [runId, next]) await h.api('carol', 'POST', `/runs/${id}/cancel`, {});
      await permissions.context().close();
    });
  }

  test('a non-admin sees the project choice disabled with the reason, and the other scopes still work', async () => {
    const runId = await startRun('alice', 'touch by-alice.txt');
    const page = await pageAs('alice', 'phone', `runs/${runId}`);
    await ask(page).locator('button:has-text("Allow always")').click();
    await projectButton(page).waitFor();
    await expect(projectButton(page).isDisabled()).resolves.toBe(true);
    // The reason is the button's description, for screen readers too.
    const note = ask(page).locator('.scope-note');
    await expect(note.textContent()).resolves.toContain('only an admin');
    await expect(projectButton(page).getAttribute('aria-describedby')).resolves.toBe(await note.getAttribute('id'));
    await snap(page, 'project-scope-phone-not-admin');
    expect(await axeProblems(page)).toEqual([]);
    await ask(page).locator('button:has-text("For this run only")').click();
    await page.locator('[data-tool-state="done"]').waitFor();
    await h.api('alice', 'POST', `/runs/${runId}/cancel`, {});
    await page.context().close();
  });
});
