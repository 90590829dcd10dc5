import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { builtinTools } from '../../src/tool/builtin/index.js';
import { defineTool } from '../../src/tool/types.js';
import { buildWeb, launch, showRun, skipBrowser, snap, VIEWPORTS, type Width } from './browser-support.js';
import { pickTool } from './survey-tools.js';

/** A tool with no plain-text field: its "edit then allow" falls back to JSON. */
const deployTool = defineTool({
  name: 'Deploy',
  description: 'Deploys to a target.',
  inputSchema: z.object({ target: z.string(), replicas: z.number() }),
  risk: 'MEDIUM',
  readOnly: false,
  async execute(input) {
    return `deployed to ${input.target} x${input.replicas}`;
  },
});

let h: Harness;
let browser: Browser;
let webRoot: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  h = await startHarness({ webRoot, tools: () => [...builtinTools(), pickTool, deployTool] });
  browser = await launch();
}, 120_000);

afterAll(async () => {
  for (const page of tabs.values()) await page.context().close();
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
});


/** One tab per width for the whole file: a new context and a cold page load per test cost more than the test itself. */
const tabs = new Map<Width, Page>();

async function open(runId: string, width: Width): Promise<Page> {
  let page = tabs.get(width);
  if (!page) {
    const ctx = await browser.newContext({ viewport: VIEWPORTS[width] });
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

const bash = (command: string, text = 'Running a command.') => [{ text, toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'Done with the command.' }];
/** The pending request: inline in the timeline on a desktop, the bottom sheet on a phone. */
const ask = (page: Page) => page.locator('[data-interaction]');
const completed = (runId: string) => eventually(async () => (await h.store.readEvents(runId)).find((e) => e.type === 'tool.completed')?.data as { content: string; isError: boolean } | undefined, 15_000);

describe.skipIf(skipBrowser).each(['desktop', 'phone'] as const)('the chat page at %s width', { timeout: 120_000 }, (width) => {
  test('an approval comes after the agent text that preceded it; Cancel run stays reachable', async () => {
    const runId = await startRun([{ text: 'My plan: first I write notes.txt, then I check it.', toolCalls: [{ name: 'Write', input: { file_path: 'notes.txt', content: 'a\n' } }] }, { text: 'ok' }]);
    const page = await open(runId, width);
    await ask(page).waitFor();
    if (width === 'desktop') {
      // Inline, right after the tool card, which comes after the agent's text; no modal at all.
      expect(await page.locator('[role="dialog"]').count()).toBe(0);
      const order = await page.evaluate(() => [...document.querySelectorAll('.timeline > li')].map((li) => li.className.split(' ')[0]));
      expect(order.slice(-3)).toEqual(['msg', 'tool', 'approval-item']);
      await expect(page.locator('.msg-assistant').last().isVisible()).resolves.toBe(true);
      const box = await page.locator('.msg-assistant').last().boundingBox();
      expect(box!.y).toBeGreaterThanOrEqual(0);
    } else {
      // The sheet is modal: the page behind it is inert, the agent's text is quoted in it.
      await page.locator('[role="dialog"][aria-modal="true"]').waitFor();
      expect(await page.evaluate(() => document.getElementById('root')!.inert)).toBe(true);
      await expect(page.locator('.agent-context').textContent()).resolves.toBe('My plan: first I write notes.txt, then I check it.');
    }
    await snap(page, `chat-inline-approval-${width}`);
    const cancel = width === 'desktop' ? page.locator('.chat-head button:has-text("Cancel run")') : page.locator('[role="dialog"] button:has-text("Cancel run")');
    await cancel.click();
    await page.locator('.chat-head [data-status="cancelled"]').waitFor();
    await ask(page).waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.getElementById('root')!.inert)).toBe(false);
  });

  test('several pending requests show as "1 of 2", and the second can be answered first', async () => {
    const runId = await startRun([{ text: 'Two picks.', toolCalls: [{ name: 'Pick', input: {} }, { name: 'Pick', input: {} }] }, { text: 'Picked.' }]);
    const page = await open(runId, width);
    const picker = ask(page).locator('.pending-pick select');
    await picker.waitFor();
    const [firstId, secondId] = await picker.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(await picker.locator('option').allTextContents()).toEqual(['1 of 2: Which targets?', '2 of 2: Which targets?']);
    expect(await ask(page).getAttribute('data-interaction')).toBe(firstId);
    await snap(page, `chat-1-of-n-${width}`);
    // Jump to the second request and answer it before the first.
    await picker.selectOption(secondId!);
    await page.locator(`[data-interaction="${secondId}"]`).waitFor();
    await expect(ask(page).locator('.pending-pick select').inputValue()).resolves.toBe(secondId);
    await snap(page, `chat-1-of-n-picked-second-${width}`);
    await ask(page).locator('label:has-text("Docs") input').check();
    await ask(page).locator('button:has-text("Submit")').click();
    const second = await eventually(async () => (await h.store.getInteraction(secondId!))?.status === 'answered' ? await h.store.getInteraction(secondId!) : undefined);
    expect(second!.response).toMatchObject({ selected: ['docs'] });
    expect((await h.store.getInteraction(firstId!))?.status).toBe('pending');
    // The first one takes its place, and is no longer counted as one of several.
    await page.locator(`[data-interaction="${firstId}"]`).waitFor();
    await page.waitForFunction(() => document.querySelector('[data-interaction]') && !document.querySelector('[data-interaction] .count'));
    await ask(page).locator('label:has-text("CLI") input').check();
    await ask(page).locator('button:has-text("Submit")').click();
    await ask(page).waitFor({ state: 'detached' });
    expect((await h.store.getInteraction(firstId!))?.response).toMatchObject({ selected: ['cli'] });
  });

  test('HIGH risk: red, a plain-words warning, no "always", Enter approves nothing, n denies', async () => {
    const runId = await startRun(bash('rm -rf build'));
    const page = await open(runId, width);
    await ask(page).waitFor();
    const confirm = ask(page).locator('.confirm');
    await expect(confirm.getAttribute('data-risk')).resolves.toBe('HIGH');
    await expect(ask(page).locator('.risk-warning').textContent()).resolves.toContain('hard to get back');
    expect(await ask(page).locator('button:has-text("Allow always")').count()).toBe(0);
    const colour = await ask(page).locator('p.risk').evaluate((el) => getComputedStyle(el).borderColor);
    expect(colour).toBe('rgb(180, 35, 24)');
    // No answer holds the focus: the request itself does.
    expect(await page.evaluate(() => !!document.activeElement?.closest('[data-interaction]') && document.activeElement?.tagName !== 'BUTTON')).toBe(true);
    await snap(page, `chat-risk-high-${width}`);
    await page.keyboard.press('Enter');
    await page.keyboard.press('n');
    const result = await completed(runId);
    // Had Enter approved, the command would have run; it was denied by the `n`.
    expect(result.content).toContain('denied');
    await page.locator('[data-tool-state="denied"]').waitFor();
  });

  test('MEDIUM risk: Allow once has the focus, "always" is offered, y allows', async () => {
    const runId = await startRun(bash(`touch made-${width}.txt`));
    const page = await open(runId, width);
    await ask(page).waitFor();
    await expect(ask(page).locator('.confirm').getAttribute('data-risk')).resolves.toBe('MEDIUM');
    await page.waitForFunction(() => document.activeElement?.textContent?.includes('Allow once'));
    await expect(ask(page).locator('button:has-text("Allow always")').count()).resolves.toBe(1);
    await snap(page, `chat-risk-medium-${width}`);
    await page.keyboard.press('y');
    await page.locator('[data-tool-state="done"]').waitFor();
    expect((await completed(runId)).isError).toBe(false);
  });

  test('Escape denies; with a reason being typed it asks first; the reason survives a refresh', async () => {
    const runId = await startRun(bash(`touch esc-${width}.txt`));
    const page = await open(runId, width);
    await ask(page).waitFor();
    await page.keyboard.press('4'); // Deny…
    const reason = ask(page).getByLabel('Why? (the agent reads this)');
    await reason.fill('name it after the ticket');
    await page.reload();
    await ask(page).waitFor();
    await expect(ask(page).getByLabel('Why? (the agent reads this)').inputValue()).resolves.toBe('name it after the ticket');
    await ask(page).getByLabel('Why? (the agent reads this)').focus();
    await page.keyboard.press('Escape');
    await ask(page).locator('[role="alertdialog"]:has-text("Deny now, with the reason you typed?")').waitFor();
    await snap(page, `chat-escape-confirm-${width}`);
    await ask(page).locator('button:has-text("Deny with this reason")').click();
    expect((await completed(runId)).content).toContain('The user said: "name it after the ticket"');
    // Answered: the draft is gone with the request.
    expect(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('sage.deny-reason.')))).toEqual([]);
  });

  test('Escape with nothing typed denies at once', async () => {
    const runId = await startRun(bash(`touch plain-esc-${width}.txt`));
    const page = await open(runId, width);
    await ask(page).waitFor();
    await page.waitForFunction(() => document.activeElement?.textContent?.includes('Allow once'));
    await page.keyboard.press('Escape');
    await page.locator('[data-tool-state="denied"]').waitFor();
  });

  test('Edit: a coloured diff with line numbers and the path relative to the project, before approval', async () => {
    mkdirSync(join(h.dir, 'src'), { recursive: true });
    writeFileSync(join(h.dir, 'src', `app-${width}.ts`), 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    const file = join(h.dir, 'src', `app-${width}.ts`);
    // Edit needs the file read first in the run (Read inside the project runs without asking).
    const runId = await startRun([{ text: 'Reading it.', toolCalls: [{ name: 'Read', input: { file_path: file } }] }, { text: 'Changing b.', toolCalls: [{ name: 'Edit', input: { file_path: join(h.dir, 'src', `app-${width}.ts`), old_string: 'const b = 2;', new_string: 'const b = 20;' } }] }, { text: 'ok' }]);
    const page = await open(runId, width);
    await ask(page).waitFor();
    await expect(ask(page).locator('.diff-path').textContent()).resolves.toBe(`src/app-${width}.ts`);
    await expect(ask(page).locator('.diff-del .code').textContent()).resolves.toContain('const b = 2;');
    await expect(ask(page).locator('.diff-add .code').textContent()).resolves.toContain('const b = 20;');
    expect(await ask(page).locator('.diff-add td.ln').nth(1).textContent()).toBe('2');
    expect(await ask(page).textContent()).not.toContain('a//');
    expect(await ask(page).locator('.diff-add td.code').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(230, 246, 234)');
    expect(await ask(page).locator('.diff-del td.code').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(253, 236, 235)');
    await snap(page, `chat-edit-diff-${width}`);
    await page.keyboard.press('y');
    await page.locator('[data-tool-state="done"]').nth(1).waitFor();
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(file, 'utf8')).toBe('const a = 1;\nconst b = 20;\nconst c = 3;\n');
  });

  test('Write: a new file shown as the new file; "edit then allow" edits its text in a monospaced editor', async () => {
    const runId = await startRun([{ text: 'Creating it.', toolCalls: [{ name: 'Write', input: { file_path: `fresh-${width}.txt`, content: 'first\nsecond\n' } }] }, { text: 'ok' }]);
    const page = await open(runId, width);
    await ask(page).waitFor();
    await expect(ask(page).locator('.diff-head').textContent()).resolves.toContain('new file, 2 lines');
    await ask(page).locator('button:has-text("Edit, then allow")').click();
    const editor = ask(page).getByLabel('New content of the file');
    await expect(editor.inputValue()).resolves.toBe('first\nsecond\n');
    expect(await editor.evaluate((el) => getComputedStyle(el).fontFamily)).toMatch(/mono/i);
    await editor.fill('edited\n');
    await snap(page, `chat-write-edit-${width}`);
    await ask(page).locator('button:has-text("Allow edited input")').click();
    await page.locator('[data-tool-state="done"]').waitFor();
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(h.dir, `fresh-${width}.txt`), 'utf8')).toBe('edited\n');
  });

  test('Bash "edit then allow" edits the command; a tool without a text field falls back to JSON with a line and column', async () => {
    const runId = await startRun([{ text: 'Two steps.', toolCalls: [{ name: 'Bash', input: { command: `touch wrong-${width}.txt` } }] }, { text: 'Deploying.', toolCalls: [{ name: 'Deploy', input: { target: 'staging', replicas: 2 } }] }, { text: 'ok' }]);
    const page = await open(runId, width);
    await ask(page).waitFor();
    await page.keyboard.press('3'); // Edit, then allow…
    const command = ask(page).getByLabel('Command to run');
    await expect(command.inputValue()).resolves.toBe(`touch wrong-${width}.txt`);
    await command.fill(`touch right-${width}.txt`);
    await ask(page).locator('button:has-text("Allow edited command")').click();
    await page.locator('[data-tool-state="done"]').first().waitFor();
    await ask(page).locator('h2:has-text("Allow Deploy?")').waitFor();
    await ask(page).locator('button:has-text("Edit, then allow")').click();
    const json = ask(page).getByLabel('Input to run (JSON)');
    await json.fill('{\n  "target": "prod",\n  "replicas": two\n}');
    await ask(page).locator('button:has-text("Allow edited input")').click();
    await expect(ask(page).locator('[role="alert"]').textContent()).resolves.toMatch(/^Not valid JSON at line 3, column 15/);
    await snap(page, `chat-json-error-${width}`);
    await json.fill('{ "target": "prod", "replicas": 3 }');
    await ask(page).locator('button:has-text("Allow edited input")').click();
    const done = await eventually(async () => (await h.store.readEvents(runId)).filter((e) => e.type === 'tool.completed').map((e) => (e.data as { content: string }).content)[1], 15_000);
    expect(done).toBe('Note: the user edited the input before approving; it ran with {"target":"prod","replicas":3}.\ndeployed to prod x3');
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(h.dir, `right-${width}.txt`))).toBe(true);
    expect(existsSync(join(h.dir, `wrong-${width}.txt`))).toBe(false);
  });

  test('"Always": one answer for a compound command, listing each rule, with the scope named truthfully', async () => {
    const runId = await startRun(bash(`touch one-${width}.txt && touch two-${width}.txt`));
    const page = await open(runId, width);
    await ask(page).waitFor();
    // One "always" for the whole command, not one per part.
    await expect(ask(page).locator('button:has-text("Allow always")').count()).resolves.toBe(1);
    await ask(page).locator('button:has-text("Allow always")').click();
    await expect(ask(page).locator('.rules li').allTextContents()).resolves.toEqual([`Bash(touch one-${width}.txt)`, `Bash(touch two-${width}.txt)`]);
    await ask(page).locator('button:has-text("For this run only")').waitFor();
    await snap(page, `chat-always-scope-${width}`);
    if (width === 'desktop') {
      await ask(page).locator('button:has-text("For this run only")').click();
      const answered = await eventually(async () => (await h.store.listInteractions({ runId, status: ['answered'], limit: 10 }))[0]);
      expect(answered.response).toMatchObject({ confirmed: true, remember: 'session' });
      expect((answered.response as { rule?: string }).rule).toBeUndefined();
    } else {
      await ask(page).locator('button:has-text("Always, for me")').click();
      const saved = await eventually(async () => {
        const rules = (await h.store.listUserPermissions('alice')).map((r) => r.rule);
        return rules.includes(`Bash(touch two-${width}.txt)`) ? rules : undefined;
      });
      expect(saved).toEqual(expect.arrayContaining([`Bash(touch one-${width}.txt)`, `Bash(touch two-${width}.txt)`]));
    }
    await page.locator('[data-tool-state="done"]').waitFor();
  });

  test('a long command without spaces wraps: no button is wider than the request', async () => {
    const long = `mkdir -p ${'deeply-nested-folder-name/'.repeat(30)}end`;
    const runId = await startRun(bash(long));
    const page = await open(runId, width);
    await ask(page).waitFor();
    const frame = width === 'desktop' ? await ask(page).boundingBox() : await page.locator('.modal').boundingBox();
    const widths = await ask(page).locator('button, pre').evaluateAll((els) => els.map((el) => el.getBoundingClientRect().right));
    for (const right of widths) expect(right).toBeLessThanOrEqual(frame!.x + frame!.width + 0.5);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORTS[width].width);
    await snap(page, `chat-long-command-${width}`);
    await page.keyboard.press('n');
  });

  test('Questions: focusing "Other" selects nothing; a disabled Submit says why', async () => {
    const questions = [{ question: 'Which database?', header: 'Database', options: [{ label: 'Postgres', description: 'shared' }, { label: 'SQLite', description: 'one file' }], multiSelect: false }];
    const runId = await startRun([{ text: 'One question.', toolCalls: [{ name: 'AskUserQuestion', input: { questions } }] }, { text: 'Thanks.' }]);
    const page = await open(runId, width);
    await ask(page).waitFor();
    await expect(ask(page).locator('.why-disabled').textContent()).resolves.toBe('Answer "Database" to submit.');
    await ask(page).locator('label:has-text("SQLite") input').check();
    await ask(page).getByLabel('Your own answer to: Which database?').focus();
    await ask(page).getByLabel('Your own answer to: Which database?').click();
    // The chosen answer is still SQLite: focusing (or tapping) the field replaced nothing.
    await expect(ask(page).locator('label:has-text("SQLite") input').isChecked()).resolves.toBe(true);
    await expect(ask(page).getByLabel('Other answer to: Which database?').isChecked()).resolves.toBe(false);
    await snap(page, `chat-questions-other-focus-${width}`);
    await ask(page).locator('button:has-text("Submit answers")').click();
    // The card shows the question and the answer, not JSON.
    const card = page.locator('[data-tool-call] dl.qa');
    await card.locator('dd:has-text("SQLite")').waitFor();
    expect(await page.locator('[data-tool-call]').first().textContent()).not.toContain('{');
    await snap(page, `chat-questions-card-${width}`);
  });
});
