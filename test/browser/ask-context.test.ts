import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enc, eventually, startHarness, TOKENS, type Harness } from '../../src/server/test-support/harness.js';
import { axeProblems, buildWeb, launch, skipBrowser, snap, VIEWPORTS } from './browser-support.js';

let h: Harness;
let browser: Browser;
let webRoot: string;
let home: string;

beforeAll(async () => {
  if (skipBrowser) return;
  webRoot = await buildWeb();
  // The host's settings ask before every Read: a read inside the project is a LOW-risk ask.
  home = mkdtempSync(join(tmpdir(), 'sage-ask-context-home-'));
  mkdirSync(join(home, '.sage'));
  writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ approval: { toolOverrides: { Read: true } } }));
  h = await startHarness({ webRoot, home });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  if (webRoot) rmSync(webRoot, { recursive: true, force: true });
  if (home) rmSync(home, { recursive: true, force: true });
});

async function signedIn(size: keyof typeof VIEWPORTS, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const ctx = await browser.newContext({ viewport: VIEWPORTS[size], colorScheme });
  await ctx.addInitScript((token) => localStorage.setItem('sage.token', token), TOKENS.alice);
  return ctx.newPage();
}

/** Starts a run whose first call asks; returns the run and its pending ask. */
async function asking(task: string, toolCalls: unknown[], extra: object = {}): Promise<{ runId: string; interactionId: string }> {
  const started = await h.api('alice', 'POST', '/runs', { task, model: h.script([{ text: 'On it.', toolCalls }, { text: 'Done.' }, { text: 'Bye.' }]), ...extra });
  expect(started.status).toBe(201);
  const runId = started.body.id as string;
  const interactionId = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id);
  return { runId, interactionId };
}

describe.skipIf(skipBrowser)('the context of an ask in Chromium', { timeout: 120_000 }, () => {
  test('the inbox and the card show the task first, then folder, who asks and mode; the command and the reason once', async () => {
    const { runId, interactionId } = await asking('Fix add() and publish\nThe add function subtracts.', [{ name: 'Bash', input: { command: 'rm -rf build' } }], { permissionMode: 'acceptEdits' });
    const page = await signedIn('desktop');
    await page.goto(`${h.url}/#/inbox`);
    const item = page.locator(`.inbox-item[data-interaction="${interactionId}"]`);
    await item.locator('.ask-task').waitFor();
    await expect(item.locator('.ask-task').textContent()).resolves.toBe('Fix add() and publish');
    const facts = (await item.locator('[data-testid="ask-context"] .meta').textContent()) ?? '';
    expect(facts).toContain('asked by the run');
    expect(facts).toContain('mode acceptEdits');
    expect(await item.textContent()).not.toContain(`run ${runId.slice(0, 12)}`);
    await snap(page, 'ask-context-inbox');

    await page.goto(`${h.url}/#/runs/${enc(runId)}`);
    const card = page.locator(`[data-interaction="${interactionId}"]`);
    await card.locator('.ask-task').waitFor();
    await expect(card.locator('.ask-task').textContent()).resolves.toBe('Fix add() and publish');
    const chat = (await page.locator('.chat').innerText()) ?? '';
    expect(chat.split('rm -rf build').length - 1).toBe(1);
    expect(await page.locator('.chat .reason, .chat .decision').count()).toBe(1);
    expect(chat).not.toContain('(risk)');
    await snap(page, 'ask-context-card');
    await page.context().close();
    await h.api('alice', 'POST', `/runs/${enc(runId)}/cancel`);
  });

  test("a Write's new text is counted as its diff counts it", async () => {
    const { runId, interactionId } = await asking('Write the notes', [{ name: 'Write', input: { file_path: 'notes.txt', content: 'one\ntwo\n' } }]);
    const page = await signedIn('desktop');
    await page.goto(`${h.url}/#/runs/${enc(runId)}`);
    await page.locator('.diff-head').waitFor();
    await expect(page.locator('.diff-head').textContent()).resolves.toContain('2 lines');
    await h.api('alice', 'POST', `/interactions/${enc(interactionId)}/respond`, { requestId: interactionId, kind: 'confirm', confirmed: true });
    const input = page.locator('.tool[data-tool-state="done"] .tool-input');
    await input.waitFor();
    await expect(input.textContent()).resolves.toBe('notes.txt (2 lines of new text)');
    await page.context().close();
  });

  test('LOW, MEDIUM and HIGH asks and completed and failed runs pass axe in dark mode (and light), at both widths', async () => {
    writeFileSync(join(h.dir, 'readme.txt'), 'hello\n');
    const low = await asking('Read the readme', [{ name: 'Read', input: { file_path: join(h.dir, 'readme.txt') } }]);
    const medium = await asking('Write a file', [{ name: 'Write', input: { file_path: 'medium.txt', content: 'm\n' } }]);
    const high = await asking('Clean up', [{ name: 'Bash', input: { command: 'rm -rf dist' } }]);
    const risks = await Promise.all([low, medium, high].map(async (a) => (await h.store.getInteraction(a.interactionId))?.request.metadata?.['risk']));
    expect(risks).toEqual(['LOW', 'MEDIUM', 'HIGH']);
    const completed = (await h.api('alice', 'POST', '/runs', { task: 'finish', model: h.script([{ text: 'Answered.' }]) })).body.id as string;
    const failed = (await h.api('alice', 'POST', '/runs', { task: 'fail', model: h.script([{ text: 'Trying.', toolCalls: [{ name: 'NoSuchTool', input: {} }] }]) })).body.id as string;
    await eventually(async () => ((await h.store.getRun(completed))?.status === 'idle' ? true : undefined));
    await h.api('alice', 'POST', `/runs/${completed}/close`);
    await eventually(async () => ((await h.store.getRun(failed))?.status === 'failed' ? true : undefined));

    const found: string[] = [];
    for (const size of ['desktop', 'phone'] as const) {
      const page = await signedIn(size);
      for (const scheme of ['dark', 'light'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(`${h.url}/#/inbox`);
        for (const a of [low, medium, high]) await page.locator(`.inbox-item[data-interaction="${a.interactionId}"] span.risk`).waitFor();
        for (const p of await axeProblems(page)) found.push(`${scheme} ${size} inbox: ${p}`);
        await snap(page, `ask-context-inbox-${scheme}-${size}`);
        await page.goto(`${h.url}/#/runs`);
        await page.locator(`[data-run-id="${failed}"] .badge[data-status="failed"]`).waitFor();
        await page.locator(`[data-run-id="${completed}"] .badge[data-status="completed"]`).waitFor();
        for (const p of await axeProblems(page)) found.push(`${scheme} ${size} runs: ${p}`);
        if (scheme === 'dark') {
          for (const [name, a] of [['low', low], ['medium', medium]] as const) {
            await page.goto(`${h.url}/#/runs/${enc(a.runId)}`);
            await page.locator(`[data-interaction="${a.interactionId}"] .ask-task`).waitFor();
            for (const p of await axeProblems(page)) found.push(`${scheme} ${size} ${name} card: ${p}`);
          }
        }
      }
      await page.context().close();
    }
    expect(found).toEqual([]);
    for (const a of [low, medium, high]) await h.api('alice', 'POST', `/runs/${enc(a.runId)}/cancel`);
  });
});
