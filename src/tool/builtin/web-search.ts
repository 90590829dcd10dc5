import { z } from 'zod';
import { defineTool, type ToolResult } from '../types.js';
import { loadWebSettings, readCapped, type WebSettings } from './web-fetch.js';

const DOMAIN = /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/i;
const domains = (field: string) => z.array(z.string().regex(DOMAIN, `each of ${field} is a host name such as example.com`)).optional();

const inputSchema = z
  .object({
    query: z.string().min(2, 'the query needs at least 2 characters'),
    allowed_domains: domains('allowed_domains'),
    blocked_domains: domains('blocked_domains'),
  })
  .refine((i) => !(i.allowed_domains?.length && i.blocked_domains?.length), 'give allowed_domains or blocked_domains, not both');
export type WebSearchInput = z.infer<typeof inputSchema>;

/** One result as backends return it (SearXNG: `content`; others: `snippet` or `description`). */
const resultSchema = z
  .object({ title: z.string().optional(), url: z.string(), content: z.string().optional(), snippet: z.string().optional(), description: z.string().optional() })
  .loose();
const responseSchema = z.object({ results: z.array(z.unknown()) }).loose();

function hostMatches(host: string, domain: string): boolean {
  const d = domain.toLowerCase().replace(/^\*\./, '');
  return host === d || host.endsWith(`.${d}`);
}

export interface WebSearchToolOptions {
  /** Settings for a run's folder; default `loadWebSettings`. */
  settings?: (cwd: string) => WebSettings;
}

/**
 * WebSearch (Claude Code's name and fields) over a configurable backend: `webSearch: { url }` in
 * the settings names an endpoint that answers `GET url?q=QUERY&format=json` with
 * `{ results: [{ title, url, content | snippet | description }] }` (a SearXNG instance does).
 * Domain filters are applied to the results here, whatever the backend supports.
 */
export function createWebSearchTool(options: WebSearchToolOptions = {}) {
  return defineTool({
    name: 'WebSearch',
    description:
      'Searches the web and returns results (title, URL, snippet). Optional allowed_domains or blocked_domains filter the results. Use for current information; read a result with WebFetch.',
    inputSchema,
    risk: 'MEDIUM',
    // Not read-only: the query leaves the machine; rules or a person decide.
    readOnly: false,
    permissionResource: (input) => input.query,
    async execute(input, ctx): Promise<ToolResult> {
      let settings: WebSettings;
      try {
        settings = (options.settings ?? loadWebSettings)(ctx.cwd);
      } catch (error) {
        return { content: `WebSearch settings are invalid: ${(error as Error).message}`, isError: true };
      }
      const backend = settings.webSearch;
      if (!backend) return { content: 'WebSearch has no search backend: set "webSearch": { "url": "https://…/search" } in ~/.sage/settings.json (a SearXNG-compatible JSON endpoint).', isError: true };
      const timeoutMs = backend.timeoutMs ?? 20_000;
      const url = new URL(backend.url);
      url.searchParams.set('q', input.query);
      if (!url.searchParams.has('format')) url.searchParams.set('format', 'json');
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      let json: unknown;
      try {
        const response = await fetch(url, { signal, headers: { accept: 'application/json', ...(backend.headers ?? {}) } });
        const { bytes } = await readCapped(response, 2_000_000);
        if (!response.ok) return { content: `The search backend answered ${response.status}.`, isError: true };
        json = JSON.parse(new TextDecoder().decode(bytes));
      } catch (error) {
        if (ctx.signal.aborted) return { content: 'WebSearch was cancelled.', isError: true };
        if (signal.aborted) return { content: `The search backend did not answer within ${timeoutMs} ms.`, isError: true };
        return { content: `WebSearch failed: ${(error as Error).message}`, isError: true };
      }
      const parsed = responseSchema.safeParse(json);
      if (!parsed.success) return { content: 'The search backend did not answer with { "results": [...] }.', isError: true };
      const results = parsed.data.results
        .map((r) => resultSchema.safeParse(r))
        .filter((r) => r.success)
        .map((r) => r.data)
        .filter((r) => {
          let host: string;
          try {
            host = new URL(r.url).hostname.toLowerCase();
          } catch {
            return false;
          }
          if (input.allowed_domains?.length) return input.allowed_domains.some((d) => hostMatches(host, d));
          if (input.blocked_domains?.length) return !input.blocked_domains.some((d) => hostMatches(host, d));
          return true;
        })
        .slice(0, backend.maxResults ?? 10);
      if (results.length === 0) return { content: `No results for "${input.query}".`, data: { results: [] } };
      const lines = results.map((r, i) => `${i + 1}. ${r.title ?? r.url}\n   ${r.url}${(r.content ?? r.snippet ?? r.description) ? `\n   ${(r.content ?? r.snippet ?? r.description)!.replace(/\s+/g, ' ').slice(0, 500)}` : ''}`);
      return { content: `Results for "${input.query}":\n\n${lines.join('\n\n')}`, data: { results: results.map((r) => ({ title: r.title, url: r.url })) } };
    },
  });
}

export const webSearchTool = createWebSearchTool();
