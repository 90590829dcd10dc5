import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { builtinTools } from '../../src/tool/builtin/index.js';
import { buildWeb, launch, showRun, skipBrowser, snap } from './browser-support.js';
import { formTool, pickTool, surveyTool } from './survey-tools.js';

let h: Harness;
let browser: Browser;
let webRoot: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  h = await startHarness({ webRoot, tools: () => [...builtinTools(), surveyTool, pickTool, formTool] });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  for (const page of tabs.values()) await page.context().close();
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});

/** A signed-in tab (the token is in localStorage, as after the login form). */
async function signedIn(context?: BrowserContext, viewport = { width: 1100, height: 800 }): Promise<Page> {
  const ctx = context ?? (await browser.newContext({ viewport }));
  await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
  return ctx.newPage();
}

/** Signed-in tabs kept open across tests, one per viewport, for the tests that need no fresh one. */
const tabs = new Map<string, Page>();
async function tab(viewport = { width: 1100, height: 800 }): Promise<Page> {
  const key = `${viewport.width}x${viewport.height}`;
  let page = tabs.get(key);
  if (!page) tabs.set(key, (page = await signedIn(undefined, viewport)));
  return page;
}

const writeScript = (file: string) => [
  { text: `I will create ${file}.`, toolCalls: [{ name: 'Write', input: { file_path: file, content: 'hello\n' } }] },
  { text: 'The file is written.' },
];

async function startRun(turns: unknown[], task = 'do it'): Promise<string> {
  const res = await h.api('alice', 'POST', '/runs', { task, model: h.script(turns) });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const overlay = (page: Page) => page.locator('[role="dialog"]');
/** A pending request: inline in the timeline on a wide screen, the bottom sheet on a phone. */
const ask = (page: Page) => page.locator('[data-interaction]');

// A real browser on a shared CI machine: generous per-test time, but every wait is for a selector.
describe.skipIf(skipBrowser)('the web UI in Chromium', { timeout: 60_000 }, () => {
  test('sign in, start a run in the page, approve its permission ask, it completes', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage();
    await page.goto(h.url);
    await page.fill('#token', 'wrong-token');
    await page.click('button:has-text("Sign in")');
    await page.waitForSelector('.login [role="alert"]');
    await page.fill('#token', TOKENS.alice);
    await page.click('button:has-text("Sign in")');
    await page.waitForSelector('h1:has-text("Runs")');

    await page.fill('#new-task', 'create approve.txt');
    await page.fill('#new-model', h.script(writeScript('approve.txt')));
    await page.click('button:has-text("Start run")');
    await ask(page).waitFor();
    await expect(ask(page).locator('h2').textContent()).resolves.toContain('Allow Write?');
    await expect(ask(page).locator('.diff-path').textContent()).resolves.toBe('approve.txt');
    await snap(page, '1-approve-overlay');

    await ask(page).locator('button:has-text("Allow once")').click();
    await ask(page).waitFor({ state: 'detached' });
    const card = page.locator('[data-tool-state="done"]');
    await card.waitFor();
    await expect(card.locator('.decision').textContent()).resolves.toContain('approved by the user');
    // A short result is shown open.
    await expect(card.locator('.tool-result pre').textContent()).resolves.toMatch(/approve\.txt/);
    await page.locator('[data-testid="assistant-text"]:has-text("The file is written.")').waitFor();
    await snap(page, '2-approve-tool-done');

    await page.click('.composer button:has-text("Finish")');
    await page.locator('.chat-head [data-status="completed"]').waitFor();
    await snap(page, '3-approve-completed');
    await page.context().close();
  });

  test('a Questions interaction: an option, and "Other" with free text', async () => {
    const questions = [
      { question: 'Which database should I use?', header: 'Database', options: [{ label: 'Postgres', description: 'shared, many instances' }, { label: 'SQLite', description: 'embedded, one file' }], multiSelect: false },
      { question: 'Which checks should run?', header: 'Checks', options: [{ label: 'Lint', description: 'eslint' }, { label: 'Tests', description: 'vitest' }], multiSelect: true },
    ];
    const runId = await startRun([{ text: 'A question first.', toolCalls: [{ name: 'AskUserQuestion', input: { questions } }] }, { text: 'Thanks, noted.' }]);
    const page = await tab();
    await showRun(page, h.url, runId);
    await ask(page).waitFor();
    await expect(ask(page).textContent()).resolves.toContain('embedded, one file');
    const submit = ask(page).locator('button:has-text("Submit answers")');
    await expect(submit.isDisabled()).resolves.toBe(true);
    await ask(page).locator('label:has-text("SQLite") input').check();
    await ask(page).locator('label:has-text("Tests") input').check();
    await ask(page).getByLabel('Your own answer to: Which checks should run?').fill('typecheck');
    await snap(page, '4-questions-filled');
    await submit.click();
    await ask(page).waitFor({ state: 'detached' });
    const done = await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed'));
    expect((done.data as { content: string }).content).toBe(
      'User answered: "Which database should I use?"="SQLite", "Which checks should run?"="Tests, typecheck". You can now continue with the user\'s answers in mind.',
    );
    await page.locator('[data-testid="assistant-text"]:has-text("Thanks, noted.")').waitFor();
    await snap(page, '5-questions-answered');
  });

  test('deny with a reason: the reason reaches the model in the tool result', async () => {
    const runId = await startRun(writeScript('denied.txt'));
    const page = await signedIn(undefined, { width: 375, height: 740 });
    await page.goto(`${h.url}/#/runs/${runId}`);
    await overlay(page).waitFor();
    await snap(page, '6-deny-overlay-phone');
    await overlay(page).locator('button:has-text("Deny")').click();
    await overlay(page).getByLabel('Why? (the agent reads this)').fill('write it under tmp/ instead');
    await snap(page, '7-deny-reason-phone');
    await overlay(page).locator('button[type="submit"]:has-text("Deny")').click();
    await overlay(page).waitFor({ state: 'detached' });
    const result = await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed'));
    expect(result.data).toMatchObject({ isError: true });
    expect((result.data as { content: string }).content).toContain('The user said: "write it under tmp/ instead"');
    await page.locator('[data-tool-state="denied"] .decision:has-text("denied by the user: write it under tmp/ instead")').waitFor();
    await snap(page, '8-deny-result-phone');
    await page.context().close();
  });

  test('refresh while waiting restores the run and its request; the keyboard alone answers it', async () => {
    const runId = await startRun(writeScript('refresh.txt'));
    // Phone width: the request is a modal sheet there, so the focus trap is exercised.
    const page = await tab({ width: 390, height: 844 });
    await showRun(page, h.url, runId);
    await overlay(page).waitFor();
    const before = await overlay(page).getAttribute('data-interaction');
    await page.reload();
    await overlay(page).waitFor();
    expect(await overlay(page).getAttribute('data-interaction')).toBe(before);
    await expect(page.locator('.msg-user').first().textContent()).resolves.toBe('do it');
    await snap(page, '9-refresh-restored');
    // Focus starts on "Allow once"; Tab walks the choices and wraps inside the dialog.
    await page.waitForFunction(() => document.activeElement?.textContent?.includes('Allow once'));
    for (let i = 0; i < 8; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]'))).toBe(true);
    await overlay(page).locator('button:has-text("Allow once")').focus();
    await snap(page, '10-keyboard-focus');
    await page.keyboard.press('Enter');
    await overlay(page).waitFor({ state: 'detached' });
    await page.locator('[data-tool-state="done"]').waitFor();
  });

  test('two tabs: answering in one closes the request in the other', async () => {
    const runId = await startRun(writeScript('tabs.txt'));
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    const tabA = await signedIn(context);
    const tabB = await context.newPage();
    await tabA.goto(`${h.url}/#/runs/${runId}`);
    await tabB.goto(`${h.url}/#/runs/${runId}`);
    await ask(tabA).waitFor();
    await ask(tabB).waitFor();
    await snap(tabB, '11-two-tabs-before');
    await ask(tabA).locator('button:has-text("Allow once")').click();
    await ask(tabB).waitFor({ state: 'detached' });
    await tabB.locator('[data-tool-state="done"]').waitFor();
    await snap(tabB, '12-two-tabs-closed-in-other');
    await context.close();
  });

  test('a Combined request (input, select, confirm) and a multi-select, answered with the keyboard', async () => {
    const runId = await startRun([
      { text: 'Setup first.', toolCalls: [{ name: 'Survey', input: {} }] },
      { text: 'Now the targets.', toolCalls: [{ name: 'Pick', input: {} }] },
      { text: 'All set.' },
    ]);
    const page = await tab({ width: 390, height: 844 });
    await showRun(page, h.url, runId);
    await overlay(page).waitFor();
    expect(await overlay(page).getAttribute('data-kind')).toBe('combined');
    // Focus starts in the first field; everything else is reached with Tab and Space.
    await page.waitForFunction(() => document.activeElement?.id.endsWith('-name-field'));
    // The disabled Submit says which field is still missing, tied to it by aria-describedby.
    const why = async () => {
      const submit = overlay(page).locator('button:has-text("Submit")');
      const id = await submit.getAttribute('aria-describedby');
      return { disabled: await submit.isDisabled(), text: id ? await page.locator(`[id="${id}"]`).textContent() : null };
    };
    expect(await why()).toEqual({ disabled: true, text: 'Answer "Project name" to submit.' });
    await page.keyboard.type('rocket');
    await overlay(page).locator('.why-disabled:has-text("Language")').waitFor();
    expect(await why()).toEqual({ disabled: true, text: 'Answer "Language" to submit.' });
    await snap(page, '13-combined-why-disabled-phone');
    await page.keyboard.press('Tab'); // the language radio group
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab'); // the confirm radio group
    await page.keyboard.press('Space');
    await overlay(page).locator('button:has-text("Submit"):not([disabled])').waitFor();
    expect(await why()).toEqual({ disabled: false, text: null });
    await page.keyboard.press('Tab'); // Submit
    await snap(page, '13-combined-phone');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Submit');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[role="dialog"][data-kind="select"]');
    // Checkboxes each take a Tab stop: Web (focused first), CLI, Docs, then Submit.
    await page.waitForFunction(() => (document.activeElement as HTMLInputElement | null)?.value === 'web');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await overlay(page).locator('button:has-text("Submit"):not([disabled])').waitFor();
    await page.keyboard.press('Tab');
    await snap(page, '14-select-multiple-phone');
    await page.keyboard.press('Enter');
    await overlay(page).waitFor({ state: 'detached' });
    const results = await eventually(async () => {
      const done = (await h.store.readEvents(runId)).filter((e) => e.type === 'tool.completed');
      return done.length === 2 ? done.map((e) => (e.data as { content: string }).content) : undefined;
    });
    expect(JSON.parse(results[0]!)).toEqual({ name: { kind: 'input', text: 'rocket' }, lang: { kind: 'select', selected: ['ts'] }, ok: { kind: 'confirm', confirmed: true } });
    expect(results[1]).toBe('selected: web,docs');
  });

  test("a form's select and yes/no defaults are chosen at first: a name is all it needs", async () => {
    const runId = await startRun([{ text: 'A form.', toolCalls: [{ name: 'Form', input: {} }] }, { text: 'Thanks.' }]);
    const page = await tab();
    await showRun(page, h.url, runId);
    await ask(page).locator('input[value="blue"]:checked').waitFor();
    await ask(page).locator('input[type="radio"]:checked').nth(1).waitFor();
    await page.waitForFunction(() => document.activeElement?.id.endsWith('-name-field'));
    await page.keyboard.type('Ada');
    await ask(page).locator('button:has-text("Submit"):not([disabled])').click();
    const result = await eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed')?.data as { content: string } | undefined);
    expect(JSON.parse(result.content)).toEqual({ name: { kind: 'input', text: 'Ada' }, color: { kind: 'select', selected: ['blue'] }, age: { kind: 'input', text: '' }, subscribe: { kind: 'confirm', confirmed: true } });
  });

  test('two requests pending at once: answered one after the other, each with a fresh form', async () => {
    // Read-only tools run concurrently, so both asks are pending together.
    const runId = await startRun([{ text: 'Two picks.', toolCalls: [{ name: 'Pick', input: {} }, { name: 'Pick', input: {} }] }, { text: 'Picked.' }]);
    const page = await tab();
    await showRun(page, h.url, runId);
    await ask(page).locator('.count:has-text("1 of 2")').waitFor();
    const first = await ask(page).getAttribute('data-interaction');
    await ask(page).locator('label:has-text("CLI") input').check();
    await ask(page).locator('button:has-text("Submit")').click();
    await page.waitForSelector(`[data-interaction]:not([data-interaction="${first}"])`);
    // The second form starts empty and usable: nothing carried over from the first answer.
    expect(await ask(page).locator('input:checked').count()).toBe(0);
    await ask(page).locator('label:has-text("Docs") input').check();
    await ask(page).locator('button:has-text("Submit"):not([disabled])').click();
    await ask(page).waitFor({ state: 'detached' });
    const results = await eventually(async () => {
      const done = (await h.store.readEvents(runId)).filter((e) => e.type === 'tool.completed');
      return done.length === 2 ? done.map((e) => (e.data as { content: string }).content).sort() : undefined;
    });
    expect(results).toEqual(['selected: cli', 'selected: docs']);
  });

  test('the inbox lists the pending request and leads to its run', async () => {
    const runId = await startRun(writeScript('inbox.txt'), 'inbox task');
    const page = await tab();
    await page.goto(`${h.url}/#/inbox`);
    const link = page.locator(`.inbox a[href="#/runs/${runId}"]`);
    await link.waitFor();
    await snap(page, '15-inbox');
    await link.click();
    await ask(page).waitFor();
  });

  test('the permissions page adds and removes a pattern; the audit view shows decisions', async () => {
    const page = await tab();
    await page.goto(`${h.url}/#/permissions`);
    await page.fill('#rule', 'Bash(npm run test:*)');
    await page.click('button:has-text("Add")');
    // Under the default server policy only admins add allow rules; the page says why.
    await page.locator('[role="alert"]:has-text("only admins")').waitFor();
    await page.selectOption('#rule-kind', 'deny');
    await page.click('button:has-text("Add")');
    await page.locator('[data-list="deny"] code:has-text("Bash(npm run test:*)")').waitFor();
    await page.fill('#rule', 'Bash(npm');
    await page.click('button:has-text("Add")');
    await page.locator('[role="alert"]:has-text("rule")').waitFor();
    await snap(page, '16-permissions');
    await page.click('button[aria-label="Remove Bash(npm run test:*) from deny"]');
    await page.locator('[data-list="deny"] .empty').waitFor();
    expect(await h.store.listUserPermissions('alice')).toEqual([]);
    await page.goto(`${h.url}/#/audit`);
    await page.locator('table.audit tbody tr').first().waitFor();
    await snap(page, '17-audit');
  });
});
