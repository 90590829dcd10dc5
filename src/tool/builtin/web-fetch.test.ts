import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPermissionEngine } from '../../permission/engine.js';
import { trustFolder } from '../../permission/trusted-folders.js';
import { ToolRegistry } from '../registry.js';
import type { ToolContext, ToolResult } from '../types.js';
import { htmlToText } from './web-fetch-html.js';
import { createWebFetchTool, loadWebSettings } from './web-fetch.js';
import { createWebSearchTool } from './web-search.js';

let server: Server;
let base: string;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sage-web-'));
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/page') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<html><head><title>T &amp; co</title><style>p{}</style></head><body><script>evil()</script><h1>Hello</h1><p>One&nbsp;<a href="/next">next page</a></p><ul><li>a</li><li>b</li></ul></body></html>');
    } else if (url.pathname === '/same') {
      res.writeHead(302, { location: '/page' }).end();
    } else if (url.pathname === '/away') {
      res.writeHead(302, { location: 'http://localhost:1/elsewhere' }).end();
    } else if (url.pathname === '/big') {
      res.setHeader('content-type', 'text/plain');
      res.end('x'.repeat(50_000));
    } else if (url.pathname === '/slow') {
      setTimeout(() => res.end('late'), 2_000).unref();
    } else if (url.pathname === '/search') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results: [
        { title: 'Docs', url: 'https://docs.example.com/a', content: `about ${url.searchParams.get('q')}` },
        { title: 'Spam', url: 'https://spam.test/x', snippet: 'buy' },
        { title: 'Bad', url: 'not a url' },
      ] }));
    } else {
      res.writeHead(404).end('missing');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctx = (signal = new AbortController().signal): ToolContext => ({ runId: 'r', sessionId: 's', userId: 'u', toolCallId: 'c', cwd: dir, signal, runState: new Map(), interact: async () => { throw new Error('no'); } });
const result = (r: ToolResult | string) => (typeof r === 'string' ? { content: r } : r);

describe('htmlToText', () => {
  it('drops scripts and styles, keeps structure, links and entities', () => {
    const text = htmlToText('<head><title>T</title></head><script>x()</script><p>a &lt;b&gt; &#x41;</p><a href="/y">y</a><br>z', 'https://h.test/p');
    expect(text).toBe('# T\n\na <b> A\ny (https://h.test/y)\nz');
  });
});

describe('WebFetch', () => {
  const tool = createWebFetchTool({ settings: () => ({ webFetch: { maxChars: 1_000, maxBytes: 20_000, timeoutMs: 300 } }) });

  it('returns the page as text with the prompt', async () => {
    const r = result(await tool.execute({ url: `${base}/page`, prompt: 'what is it?' }, ctx()));
    expect(r.isError).toBeUndefined();
    expect(r.content).toContain('# T & co\n\nHello\n\nOne next page (' + base + '/next)\n\n- a\n- b');
    expect(r.content).not.toContain('evil');
    expect(r.content).toMatch(/Answer from the content above: what is it\?$/);
  });

  it('follows a redirect on the same host; one to another host is reported, not followed', async () => {
    expect(result(await tool.execute({ url: `${base}/same`, prompt: 'p' }, ctx())).content).toContain(`URL: ${base}/page`);
    const away = result(await tool.execute({ url: `${base}/away`, prompt: 'p' }, ctx()));
    expect(away.content).toContain('redirects to another host: http://localhost:1/elsewhere');
  });

  it('caps bytes, characters and time', async () => {
    const big = result(await tool.execute({ url: `${base}/big`, prompt: 'p' }, ctx()));
    expect(big.content).toContain('only the first 20000 bytes were downloaded; 19000 more characters cut');
    const slow = result(await tool.execute({ url: `${base}/slow`, prompt: 'p' }, ctx()));
    expect(slow).toMatchObject({ isError: true });
    expect(slow.content).toContain('longer than 300 ms');
    expect(result(await tool.execute({ url: `${base}/nothing`, prompt: 'p' }, ctx()))).toMatchObject({ isError: true });
  });

  it('is matched by WebFetch(domain:…) rules on the URL host; other hosts ask', async () => {
    const engine = createPermissionEngine({ home: path.join(dir, 'h'), projectRoot: dir, caseInsensitiveFs: false, rules: [{ rule: 'WebFetch(domain:127.0.0.1)', behavior: 'allow' }, { rule: 'WebFetch(domain:*.evil.test)', behavior: 'deny' }] });
    const info = new ToolRegistry([tool], dir).gateInfoOf('WebFetch')!;
    const decide = async (url: string) => (await engine.decide({ toolCallId: 'c', toolName: 'WebFetch', input: { url, prompt: 'p' }, tool: info }, { runId: 'r', sessionId: 's', userId: 'u', channel: 'cli', cwd: dir })).behavior;
    expect(await decide(`${base}/page`)).toBe('allow');
    expect(await decide('https://a.evil.test/')).toBe('deny');
    expect(await decide('https://evil.test/')).toBe('deny');
    expect(await decide('https://example.com/')).toBe('ask');
  });
});

describe('WebSearch', () => {
  it('asks the configured backend and filters by domain', async () => {
    const tool = createWebSearchTool({ settings: () => ({ webSearch: { url: `${base}/search` } }) });
    const all = result(await tool.execute({ query: 'sage agents' }, ctx()));
    expect(all.content).toContain('1. Docs\n   https://docs.example.com/a\n   about sage agents');
    expect(all.content).toContain('2. Spam');
    expect(all.content).not.toContain('Bad');
    const allowed = result(await tool.execute({ query: 'sage', allowed_domains: ['example.com'] }, ctx()));
    expect(allowed.content).not.toContain('Spam');
    const blocked = result(await tool.execute({ query: 'sage', blocked_domains: ['spam.test'] }, ctx()));
    expect(blocked.content).toContain('Docs');
    expect(blocked.content).not.toContain('Spam');
  });

  it('without a backend says how to set one; a backend that fails is an error result', async () => {
    expect(result(await createWebSearchTool({ settings: () => ({}) }).execute({ query: 'q q' }, ctx())).content).toMatch(/"webSearch": \{ "url"/);
    expect(result(await createWebSearchTool({ settings: () => ({ webSearch: { url: `${base}/nothing` } }) }).execute({ query: 'q q' }, ctx()))).toMatchObject({ isError: true, content: 'The search backend answered 404.' });
  });

  it("reads webSearch from the user's settings, and a project's only once the folder is trusted", () => {
    const home = path.join(dir, 'home');
    const project = path.join(dir, 'proj');
    mkdirSync(path.join(home, '.sage'), { recursive: true });
    mkdirSync(path.join(project, '.sage'), { recursive: true });
    writeFileSync(path.join(home, '.sage', 'settings.json'), JSON.stringify({ webSearch: { url: 'https://user.example/search' } }));
    writeFileSync(path.join(project, '.sage', 'settings.json'), JSON.stringify({ webSearch: { url: 'https://repo.example/search' } }));
    expect(loadWebSettings(project, home).webSearch?.url).toBe('https://user.example/search');
    trustFolder(home, project);
    expect(loadWebSettings(project, home).webSearch?.url).toBe('https://repo.example/search');
    writeFileSync(path.join(project, '.sage', 'settings.json'), JSON.stringify({ webSearch: { url: 'nope' } }));
    expect(() => loadWebSettings(project, home)).toThrow(/settings\.json: webSearch\.url/);
  });
});
