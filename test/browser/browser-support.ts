import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const repo = fileURLToPath(new URL('../..', import.meta.url));
export const ARTIFACTS = join(repo, 'test-artifacts', 'browser');

/**
 * Browser tests need Debian's Chromium. Locally they are skipped without it; in CI a missing
 * browser is a failure, never a silent skip.
 */
export const skipBrowser = !existsSync(CHROMIUM) && !process.env['CI'];

/** Builds the web UI from source into a temp dir, so the tests always run the current code. */
export async function buildWeb(): Promise<string> {
  const { build } = await import('vite');
  const outDir = mkdtempSync(join(tmpdir(), 'sage-web-'));
  await build({ root: join(repo, 'web'), configFile: join(repo, 'web', 'vite.config.ts'), logLevel: 'error', build: { outDir, emptyOutDir: true, sourcemap: false } });
  return outDir;
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Saves a screenshot of the current state under test-artifacts/browser/. */
export async function snap(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The two widths every page is tested at (issue 14): a desktop and a phone. */
export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
export type Width = keyof typeof VIEWPORTS;

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical axe violations on the page as it is now (ids and the first targets of each). */
export async function axeProblems(page: Page): Promise<string[]> {
  // Evaluated over the devtools protocol: the page's CSP (script-src 'self') rightly refuses an inline tag.
  // Once per document: the hash routes keep the document, and parsing axe again costs as much as a run.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, options: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    // Only violations are read: the other groups are cut to one node each, which spares most of the work.
    return axe.run(document, { resultTypes: ['violations'] });
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/**
 * Shows a run's chat page in a tab that may be open already. A blank tab loads the UI; an open one
 * follows the hash route, as a user following a link to another run does: the chat page is keyed by
 * run id, so the app mounts it anew. A cold page load and a new context per test cost more than most tests.
 */
export async function showRun(page: Page, url: string, runId: string): Promise<void> {
  const target = `${url}/#/runs/${encodeURIComponent(runId)}`;
  if (!page.url().startsWith(url)) {
    await page.goto(target);
    return;
  }
  // Marks what the page shows now, so the wait ends only once the new run's page has replaced it.
  await page.evaluate((hash) => {
    for (const el of document.querySelectorAll('.page > *')) el.setAttribute('data-previous-page', '');
    window.location.hash = hash;
  }, `#/runs/${encodeURIComponent(runId)}`);
  await page.waitForFunction(() => !document.querySelector('[data-previous-page]') && document.querySelector('.chat-title'));
}
