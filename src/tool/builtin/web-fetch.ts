import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { isFolderTrusted } from '../../permission/trusted-folders.js';
import { defineTool, type ToolResult } from '../types.js';
import { htmlToText } from './web-fetch-html.js';

/** Defaults of WebFetch's caps; `webFetch` in settings may lower or raise them. */
export const WEB_FETCH_DEFAULTS = { timeoutMs: 30_000, maxBytes: 5_000_000, maxChars: 100_000 } as const;
const MAX_REDIRECTS = 5;

/** `webFetch` and `webSearch` in the settings files. */
export const webSettingsSchema = z.object({
  webFetch: z
    .object({
      timeoutMs: z.number().int().positive().max(600_000).optional()
        .meta({ description: 'Milliseconds a fetch may take', default: WEB_FETCH_DEFAULTS.timeoutMs }),
      maxBytes: z.number().int().positive().max(100_000_000).optional()
        .meta({ description: 'Bytes downloaded at most', default: WEB_FETCH_DEFAULTS.maxBytes }),
      maxChars: z.number().int().positive().max(1_000_000).optional()
        .meta({ description: 'Characters of the page\'s text the model gets', default: WEB_FETCH_DEFAULTS.maxChars }),
    })
    .strict()
    .optional(),
  webSearch: z
    .object({
      /** A search endpoint answering JSON (SearXNG's `format=json` shape: `results[].title/url/content`). */
      url: z.string().url().describe('A search endpoint answering JSON, SearXNG-style (?q=…&format=json)'),
      headers: z.record(z.string(), z.string()).optional().describe('Headers sent with each search'),
      timeoutMs: z.number().int().positive().max(600_000).optional().describe('Milliseconds a search may take'),
      maxResults: z.number().int().positive().max(50).optional().describe('Results given to the model at most'),
    })
    .strict()
    .optional(),
});
export type WebSettings = z.infer<typeof webSettingsSchema>;

/**
 * The web settings for a run in `cwd`: `~/.sage/settings.json`, then — only once the folder is
 * trusted, since a repository must not choose where the agent's searches go — the project's
 * `.sage/settings.json` and `.sage/settings.local.json`; later files win per key. A file whose
 * `webFetch`/`webSearch` do not validate throws, naming the file.
 */
export function loadWebSettings(cwd: string, home = process.env.SAGE_HOME || homedir()): WebSettings {
  const files = [path.join(home, '.sage', 'settings.json')];
  if (isFolderTrusted(home, cwd)) files.push(path.join(cwd, '.sage', 'settings.json'), path.join(cwd, '.sage', 'settings.local.json'));
  const merged: WebSettings = {};
  for (const file of files) {
    if (!existsSync(file)) continue;
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue; // the settings loader reports a file that is not JSON (and the gate fails closed)
    }
    const data = json as { webFetch?: unknown; webSearch?: unknown };
    const parsed = webSettingsSchema.safeParse({ webFetch: data?.webFetch, webSearch: data?.webSearch });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`${file}: ${issue.path.map(String).join('.')}: ${issue.message}`);
    }
    if (parsed.data.webFetch) merged.webFetch = { ...merged.webFetch, ...parsed.data.webFetch };
    if (parsed.data.webSearch) merged.webSearch = parsed.data.webSearch;
  }
  return merged;
}

/** Reads a response body up to `maxBytes`; the rest is not downloaded. */
export async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { bytes, truncated };
}

const inputSchema = z.object({
  url: z.string().url('url must be a full URL such as https://example.com/page').refine((u) => /^https?:\/\//i.test(u), 'only http:// and https:// URLs can be fetched'),
  prompt: z.string().min(1, 'say what to look for in the page'),
});
export type WebFetchInput = z.infer<typeof inputSchema>;

export interface WebFetchToolOptions {
  /** Settings for a run's folder; default `loadWebSettings`. */
  settings?: (cwd: string) => WebSettings;
}

/**
 * WebFetch (Claude Code's name and fields): fetches a URL and returns the page as text (HTML
 * converted), capped in time, bytes and characters, with the prompt for the model to answer from
 * it. Permission rules match the URL's host (`WebFetch(domain:example.com)`). A redirect to another
 * host is not followed: the model is told the new URL, so that fetch passes the gate itself.
 */
export function createWebFetchTool(options: WebFetchToolOptions = {}) {
  return defineTool({
    name: 'WebFetch',
    description:
      'Fetches a URL (http or https) and returns its content as text (HTML converted to text), with your prompt to answer from it. Use for reading a specific web page. A redirect to another host is reported, not followed: fetch the new URL yourself.',
    inputSchema,
    risk: 'MEDIUM',
    // Not read-only: what it fetches leaves the machine as a request; rules or a person decide.
    readOnly: false,
    permissionResource: (input) => input.url,
    async execute(input, ctx): Promise<ToolResult> {
      let caps: { timeoutMs: number; maxBytes: number; maxChars: number };
      try {
        caps = { ...WEB_FETCH_DEFAULTS, ...(options.settings ?? loadWebSettings)(ctx.cwd).webFetch };
      } catch (error) {
        return { content: `WebFetch settings are invalid: ${(error as Error).message}`, isError: true };
      }
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(caps.timeoutMs)]);
      let url = input.url;
      try {
        for (let hop = 0; ; hop++) {
          const response = await fetch(url, { redirect: 'manual', signal, headers: { 'user-agent': 'sage-agent WebFetch', accept: 'text/html, text/plain, application/json, */*;q=0.5' } });
          if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
            const next = new URL(response.headers.get('location')!, url).href;
            await response.body?.cancel().catch(() => {});
            if (new URL(next).host !== new URL(url).host) {
              return { content: `${url} redirects to another host: ${next}\nTo read it, call WebFetch again with that URL (it is checked against the permission rules itself).`, data: { redirect: next } };
            }
            if (hop >= MAX_REDIRECTS) return { content: `${input.url}: more than ${MAX_REDIRECTS} redirects`, isError: true };
            url = next;
            continue;
          }
          const { bytes, truncated } = await readCapped(response, caps.maxBytes);
          const type = response.headers.get('content-type') ?? '';
          const raw = new TextDecoder().decode(bytes);
          let text = /html/i.test(type) || (!type && /^\s*<(!doctype|html)/i.test(raw)) ? htmlToText(raw, url) : raw;
          const notes: string[] = [];
          if (truncated) notes.push(`only the first ${caps.maxBytes} bytes were downloaded`);
          if (text.length > caps.maxChars) {
            notes.push(`${text.length - caps.maxChars} more characters cut`);
            text = text.slice(0, caps.maxChars);
          }
          const header = `URL: ${url}\nStatus: ${response.status}${type ? `\nContent-Type: ${type}` : ''}${notes.length ? `\nNote: ${notes.join('; ')}` : ''}`;
          return {
            content: `${header}\n\n${text}\n\n---\nAnswer from the content above: ${input.prompt}`,
            ...(response.ok ? {} : { isError: true }),
            data: { url, status: response.status, bytes: bytes.length, truncated },
          };
        }
      } catch (error) {
        if (ctx.signal.aborted) return { content: 'WebFetch was cancelled.', isError: true };
        if (signal.aborted) return { content: `WebFetch of ${url} took longer than ${caps.timeoutMs} ms and was stopped.`, isError: true };
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        return { content: `WebFetch of ${url} failed: ${cause?.code ?? cause?.message ?? (error as Error).message}`, isError: true };
      }
    },
  });
}

export const webFetchTool = createWebFetchTool();
