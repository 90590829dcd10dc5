/**
 * src/mcp against a real MCP server of our own (test-support/test-server.mjs) over stdio and
 * Streamable HTTP on 127.0.0.1: config errors name file and field, tools pass the permission gate
 * (server-level denies cannot be dodged), crashes and hangs become error results and restarts,
 * elicitations become Sage interactions whose answers are checked against the requested schema.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InteractionDraft, InteractionOutcome, InteractionRequest, InteractionResponse } from '../interaction/index.js';
import { createPermissionEngine } from '../permission/engine.js';
import { trustFolder } from '../permission/trusted-folders.js';
import { ToolRegistry } from '../tool/registry.js';
import type { Tool, ToolContext } from '../tool/types.js';
import { expandServer, loadMcpConfigFile, parseMcpServers, resolveMcpServers } from './config.js';
import { DECISION_KEY, elicitationDraft, elicitationResult } from './elicitation.js';
import { McpConfigError } from './errors.js';
import { MCP_MAX_IMAGE_BYTES, MCP_MAX_RESULT_IMAGE_BYTES, McpToolset, mcpToolName, resultContent, riskOfAnnotations } from './tools.js';

/** The 1×1 PNG test-server.mjs returns from its media tool. */
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';
const SERVER = fileURLToPath(new URL('./test-support/test-server.mjs', import.meta.url));
const stdio = { command: process.execPath, args: [SERVER] };
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sage-mcp-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A tool context whose interact() answers with `answer(draft)` and records what was asked. */
function context(answer: (draft: InteractionDraft, n: number) => InteractionOutcome | Promise<InteractionOutcome>, asked: InteractionDraft[] = []): ToolContext {
  return {
    runId: 'run-1', sessionId: 's', userId: 'u', toolCallId: 'call-1', cwd: dir, signal: new AbortController().signal, runState: new Map(),
    interact: async (draft) => {
      asked.push(draft);
      return answer(draft, asked.length);
    },
  };
}
const answered = (draft: InteractionDraft, response: Partial<InteractionResponse>): InteractionOutcome => ({
  status: 'answered',
  request: { ...draft, id: 'i', runId: 'run-1', createdAt: '' } as InteractionRequest,
  response: { requestId: 'i', kind: draft.kind, respondedAt: '', ...response } as InteractionResponse,
});
const form = (fields: Record<string, { text?: string; selected?: string[] }>, accept: boolean) => ({
  kind: 'combined' as const,
  responses: {
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { kind: v.selected ? ('select' as const) : ('input' as const), ...v }])),
    [DECISION_KEY]: { kind: 'confirm' as const, confirmed: accept },
  },
});
const tool = (set: McpToolset, name: string): Tool => set.tools.find((t) => t.name === name)!;
const run = async (set: McpToolset, name: string, input: unknown, ctx = context(() => ({ status: 'cancelled', request: {} as InteractionRequest, reason: 'x' }))) => {
  const result = await tool(set, name).execute(input, ctx);
  return typeof result === 'string' ? { content: result } : result;
};

describe('MCP configuration', () => {
  it('refuses server names that would let mcp__a__b__x be read as another server, naming file and field', () => {
    expect(() => parseMcpServers({ a__b: stdio }, 'f.json')).toThrow(/f\.json: mcpServers\.a__b: .*"__"/);
    expect(() => parseMcpServers({ _a: stdio }, 'f.json')).toThrow(McpConfigError);
    expect(() => parseMcpServers({ 'a.b': stdio }, 'f.json')).toThrow(McpConfigError);
    expect(Object.keys(parseMcpServers({ 'my-server_2': stdio }, 'f.json'))).toEqual(['my-server_2']);
  });

  it('names the field at fault, refuses sse and non-URL http servers', () => {
    expect(() => parseMcpServers({ s: { command: 'x', args: 'y' } }, 'f.json')).toThrow(/mcpServers\.s\.args/);
    expect(() => parseMcpServers({ s: { type: 'sse', url: 'http://x' } }, 'f.json')).toThrow(/mcpServers\.s\.type: .*"http"/);
    expect(() => parseMcpServers({ s: { type: 'http', url: 'ftp://x' } }, 'f.json')).toThrow(/mcpServers\.s\.url/);
    expect(() => parseMcpServers({ s: { type: 'http', url: 'http://x', extra: 1 } }, 'f.json')).toThrow(McpConfigError);
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{ not json');
    expect(() => loadMcpConfigFile(bad)).toThrow(/bad\.json: \(file\): is not valid JSON/);
    writeFileSync(bad, '{"servers": {}}');
    expect(() => loadMcpConfigFile(bad)).toThrow(/bad\.json: mcpServers: is missing/);
  });

  it('expands ${VAR} and ${VAR:-default} when a server starts, and names an unset variable', () => {
    const config = { type: 'http' as const, url: 'http://${HOST:-127.0.0.1}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } };
    expect(expandServer('s', config, { TOKEN: 't0k' })).toEqual({ type: 'http', url: 'http://127.0.0.1/mcp', headers: { Authorization: 'Bearer t0k' } });
    expect(() => expandServer('s', config, {})).toThrow(/MCP server s: headers\.Authorization: the environment variable TOKEN is not set/);
  });

  it("uses a project's .mcp.json only once the folder is trusted; --mcp-config always", () => {
    const home = path.join(dir, 'home');
    const project = path.join(dir, 'proj');
    mkdirSync(project, { recursive: true });
    writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { repo: stdio } }));
    writeFileSync(path.join(dir, 'mine.json'), JSON.stringify({ mcpServers: { mine: stdio } }));
    const before = resolveMcpServers({ cwd: project, home, configFiles: [path.join(dir, 'mine.json')] });
    expect(Object.keys(before.servers)).toEqual(['mine']);
    expect(before.notices[0]!.message).toMatch(/repo.*not started until this folder is trusted/);
    trustFolder(home, project);
    expect(Object.keys(resolveMcpServers({ cwd: project, home }).servers)).toEqual(['repo']);
  });
});

describe('MCP tools under the permission gate', () => {
  // Each tool as src/mcp makes it, with a read-only claim: the gate must still not run it unasked.
  const registry = (names: string[]) => new ToolRegistry(names.map((name) => ({ name, description: name, inputSchema: {} as never, risk: riskOfAnnotations({ readOnlyHint: true }), readOnly: false, execute: async () => '' }) as Tool), dir);
  const decide = async (rules: { rule: string; behavior: 'allow' | 'ask' | 'deny' }[], name: string) => {
    const engine = createPermissionEngine({ home: path.join(dir, 'h2'), projectRoot: dir, caseInsensitiveFs: false, rules });
    const reg = registry([name]);
    return (await engine.decide({ toolCallId: 'c', toolName: name, input: {}, tool: reg.gateInfoOf(name)! }, { runId: 'r', sessionId: 's', userId: 'u', channel: 'cli', cwd: dir })).behavior;
  };

  it('a deny on mcp__srv blocks every tool of srv, even under an allow of the tool, and not srv2 or srv-x', async () => {
    const deny = [{ rule: 'mcp__srv', behavior: 'deny' as const }, { rule: 'mcp__srv__echo', behavior: 'allow' as const }, { rule: 'mcp__srv2', behavior: 'allow' as const }];
    expect(await decide(deny, 'mcp__srv__echo')).toBe('deny');
    expect(await decide(deny, mcpToolName('srv', 'weird.name/with spaces'))).toBe('deny');
    expect(await decide(deny, mcpToolName('srv', 'a__b'))).toBe('deny');
    expect(await decide(deny, 'mcp__srv2__echo')).toBe('allow');
    expect(await decide(deny, 'mcp__srv-x__echo')).toBe('ask');
  });

  it('mcp__srv__* denies the server, mcp__srv__tool only that tool; an MCP tool without a rule asks', async () => {
    expect(await decide([{ rule: 'mcp__srv__*', behavior: 'deny' }], 'mcp__srv__delete_record')).toBe('deny');
    expect(await decide([{ rule: 'mcp__srv__delete_record', behavior: 'deny' }], 'mcp__srv__delete_record')).toBe('deny');
    expect(await decide([{ rule: 'mcp__srv__delete_record', behavior: 'deny' }], 'mcp__srv__echo')).toBe('ask');
    // A read-only hint does not make a server's tool run unasked: hints are the server's claims.
    expect(await decide([], 'mcp__srv__echo')).toBe('ask');
  });

  it('maps annotations to risk, and odd tool names to the characters model APIs take', () => {
    // Never LOW: the gate runs LOW calls unasked, and a server's read-only claim must not do that.
    expect(riskOfAnnotations({ readOnlyHint: true })).toBe('MEDIUM');
    expect(riskOfAnnotations({ readOnlyHint: true, openWorldHint: true })).toBe('MEDIUM');
    expect(riskOfAnnotations({ openWorldHint: true })).toBe('HIGH');
    expect(riskOfAnnotations({ destructiveHint: true })).toBe('HIGH');
    expect(riskOfAnnotations(undefined)).toBe('MEDIUM');
    expect(mcpToolName('srv', 'get issue/v2')).toBe('mcp__srv__get_issue_v2');
  });
});

describe('elicitation mapping', () => {
  const call = { toolCallId: 'c', toolName: 'mcp__s__x' };
  it('URL mode is a confirm naming the URL: accept or decline, never content', () => {
    const params = { mode: 'url' as const, message: 'Sign in', url: 'https://auth.example/login', elicitationId: 'e1' };
    const draft = elicitationDraft('s', params, call);
    expect(draft).toMatchObject({ kind: 'confirm', title: 'MCP server s asks you to open a page: https://auth.example/login' });
    expect(elicitationResult(params, answered(draft, { confirmed: true }))).toEqual({ action: 'accept' });
    expect(elicitationResult(params, answered(draft, { confirmed: false }))).toEqual({ action: 'decline' });
  });

  it('booleans are confirm items, multi-choice arrays multiple selects with item counts checked', () => {
    const params = {
      message: 'Options',
      requestedSchema: { type: 'object' as const, properties: { ok: { type: 'boolean' as const }, tags: { type: 'array' as const, minItems: 2, items: { type: 'string' as const, enum: ['a', 'b', 'c'] } } }, required: ['ok', 'tags'] },
    };
    const draft = elicitationDraft('s', params, call) as Extract<InteractionDraft, { kind: 'combined' }>;
    expect(draft.items.map((i) => [i.key, i.kind, (i as { multiple?: boolean }).multiple ?? false])).toEqual([['ok', 'confirm', false], ['tags', 'select', true], [DECISION_KEY, 'confirm', false]]);
    const reply = (tags: string[]) => answered(draft, { kind: 'combined', responses: { ok: { kind: 'confirm', confirmed: false }, tags: { kind: 'select', selected: tags }, [DECISION_KEY]: { kind: 'confirm', confirmed: true } } });
    expect(elicitationResult(params, reply(['a', 'c']))).toEqual({ action: 'accept', content: { ok: false, tags: ['a', 'c'] } });
    expect(elicitationResult(params, reply(['a']))).toEqual({ problem: 'tags: choose at least 2' });
    expect(elicitationResult(params, reply(['a', 'z']))).toEqual({ problem: 'tags: "z" is not one of a, b, c' });
  });
});

describe('MCP results as the model sees them', () => {
  const base64OfBytes = (n: number) => Buffer.alloc(n, 1).toString('base64');

  it('sends images up to the per-image and per-result limits; a bigger one is named with its size, not sent', () => {
    const small = base64OfBytes(1024);
    const big = base64OfBytes(MCP_MAX_IMAGE_BYTES + 1);
    const nearLimit = base64OfBytes(MCP_MAX_IMAGE_BYTES - 3);
    const result = resultContent({
      content: [
        { type: 'image', data: small, mimeType: 'image/jpeg' },
        { type: 'image', data: big, mimeType: 'image/png' },
        { type: 'image', data: nearLimit, mimeType: 'image/webp' },
        { type: 'image', data: nearLimit, mimeType: 'image/webp' },
      ],
    });
    expect(result.images.map((i) => [i.mediaType, i.data.length])).toEqual([
      ['image/jpeg', small.length],
      ['image/webp', nearLimit.length],
    ]);
    expect(result.text.split('\n')).toEqual([
      '[image image/jpeg, 1024 bytes]',
      `[image image/png, ${MCP_MAX_IMAGE_BYTES + 1} bytes: not shown: over the 5 MB a model takes per image]`,
      `[image image/webp, ${MCP_MAX_IMAGE_BYTES - 3} bytes]`,
      `[image image/webp, ${MCP_MAX_IMAGE_BYTES - 3} bytes: not shown: the result's images are over ${MCP_MAX_RESULT_IMAGE_BYTES / 1024 / 1024} MB]`,
    ]);
    expect(result.media).toHaveLength(2);
  });

  it('shows an embedded image resource, strips line breaks from base64, and describes audio', () => {
    const wrapped = `${RED_PIXEL_PNG.slice(0, 40)}\r\n${RED_PIXEL_PNG.slice(40)}`;
    const result = resultContent({
      content: [
        { type: 'resource', resource: { uri: 'mem://shot.png', mimeType: 'image/png', blob: wrapped } },
        { type: 'resource', resource: { uri: 'mem://a.bin', mimeType: 'application/octet-stream', blob: 'AAAA' } },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      ],
    });
    expect(result.images).toEqual([{ mediaType: 'image/png', data: RED_PIXEL_PNG }]);
    expect(result.text.split('\n')).toEqual(['[resource mem://shot.png (image/png), 70 bytes]', '[resource mem://a.bin (application/octet-stream), binary]', '[audio audio/wav, 3 bytes]']);
  });
});

describe('MCP over stdio', () => {
  let set: McpToolset;
  beforeAll(async () => {
    set = await new McpToolset({ t: stdio }, { cwd: dir, callTimeoutMs: 400 }).start();
  });
  afterAll(() => set.close());

  it('lists the tools as mcp__t__<tool> with their annotations as risk', () => {
    expect(set.statuses[0]).toMatchObject({ name: 't', transport: 'stdio', status: 'connected' });
    expect(tool(set, 'mcp__t__echo').risk).toBe('MEDIUM');
    expect(tool(set, 'mcp__t__delete_record').risk).toBe('HIGH');
    expect(tool(set, 'mcp__t__echo').readOnly).toBe(false);
  });

  it('calls a tool; an image reaches the model as an image (named in the text), resource links as text with the URI', async () => {
    expect((await run(set, 'mcp__t__echo', { text: 'hi' })).content).toBe('echo: hi');
    const media = await run(set, 'mcp__t__media', {});
    expect(media.content).toBe(
      [
        'here is a picture',
        '[image image/png, 70 bytes]',
        '[image image/svg+xml, 41 bytes: not shown: models take PNG, JPEG, GIF and WebP images]',
        '[resource link: report file:///tmp/report.txt (text/plain)]',
      ].join('\n'),
    );
    expect(media.images).toEqual([{ mediaType: 'image/png', data: RED_PIXEL_PNG }]);
    // The SVG is kept for front ends only.
    expect((media.data as { media: { mimeType: string }[] }).media.map((m) => m.mimeType)).toEqual(['image/svg+xml']);
  });

  it('a crashing server gives an error result, and the next call gets a new server', async () => {
    const pid = (await run(set, 'mcp__t__pid', {})).content;
    const crashed = await run(set, 'mcp__t__crash', {});
    expect(crashed.isError).toBe(true);
    expect(crashed.content).toMatch(/stopped during crash/);
    const after = (await run(set, 'mcp__t__pid', {})).content;
    expect(after).toMatch(/^\d+$/);
    expect(after).not.toBe(pid);
  });

  it('a hanging call times out, the server is restarted, the run goes on', async () => {
    const pid = (await run(set, 'mcp__t__pid', {})).content;
    const hung = await run(set, 'mcp__t__hang', {});
    expect(hung).toMatchObject({ isError: true });
    expect(hung.content).toMatch(/did not answer hang within 400 ms/);
    expect((await run(set, 'mcp__t__pid', {})).content).not.toBe(pid);
  });

  it('an elicitation becomes a combined interaction; accepted data goes back validated', async () => {
    const asked: InteractionDraft[] = [];
    const result = await run(set, 'mcp__t__ask_name', {}, context((d) => answered(d, form({ name: { text: 'Ann' }, color: { selected: ['green'] }, age: { text: '41' } }, true)), asked));
    expect(result.content).toBe('hello Ann ({"name":"Ann","color":"green","age":41})');
    const draft = asked[0] as Extract<InteractionDraft, { kind: 'combined' }>;
    expect(draft.title).toBe('MCP server t asks: Who are you?');
    expect(draft).toMatchObject({ kind: 'combined', toolName: 'mcp__t__ask_name', toolCallId: 'call-1', description: 'Who are you?', metadata: { mcp: { server: 't', elicitation: 'form' } } });
    expect(draft.items.map((i) => [i.key, i.kind])).toEqual([['name', 'input'], ['color', 'select'], ['age', 'input'], [DECISION_KEY, 'confirm']]);
  });

  it('declined and cancelled elicitations reach the server as such', async () => {
    const declined = await run(set, 'mcp__t__ask_name', {}, context((d) => answered(d, form({ name: { text: '' }, color: { selected: [''] }, age: { text: '' } }, false))));
    expect(declined.content).toBe('elicitation decline');
    const cancelled = await run(set, 'mcp__t__ask_name', {}, context((d) => ({ status: 'expired', request: d as InteractionRequest, reason: 'timeout' })));
    expect(cancelled.content).toBe('elicitation cancel');
  });

  it('an answer that does not fit the schema is asked again with the reason; three misfits cancel', async () => {
    const asked: InteractionDraft[] = [];
    const fixed = await run(set, 'mcp__t__ask_name', {}, context((d, n) => answered(d, form(n === 1 ? { name: { text: '' }, color: { selected: [''] }, age: { text: '-3' } } : { name: { text: 'Bo' }, color: { selected: [''] }, age: { text: '' } }, true)), asked));
    expect(fixed.content).toBe('hello Bo ({"name":"Bo"})');
    expect(asked).toHaveLength(2);
    expect(asked[1]!.description).toMatch(/name: required; age: must be ≥ 0/);
    expect(asked[1]!.title).toMatch(/asked again: name: required/);
    const never = await run(set, 'mcp__t__ask_name', {}, context((d) => answered(d, form({ name: { text: 'x' }, color: { selected: [''] }, age: { text: '1.5' } }, true))));
    expect(never.content).toBe('elicitation cancel');
  });
});

describe('MCP over Streamable HTTP', () => {
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    child = spawn(process.execPath, [SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        const m = /LISTENING (\S+)/.exec(chunk.toString());
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error('the test server exited')));
    });
  });
  afterAll(() => {
    child.kill();
  });

  it('calls tools and answers elicitations over HTTP', async () => {
    const set = await new McpToolset({ web: { type: 'http', url } }, { cwd: dir }).start();
    try {
      expect(set.statuses[0]).toMatchObject({ transport: 'http', status: 'connected' });
      expect((await run(set, 'mcp__web__echo', { text: 'over http' })).content).toBe('echo: over http');
      const result = await run(set, 'mcp__web__ask_name', {}, context((d) => answered(d, form({ name: { text: 'Cy' }, color: { selected: ['red'] }, age: { text: '' } }, true))));
      expect(result.content).toBe('hello Cy ({"name":"Cy","color":"red"})');
    } finally {
      await set.close();
    }
  });

  it('a server that is not there is reported, not fatal', async () => {
    const set = await new McpToolset({ gone: { type: 'http', url: 'http://127.0.0.1:9/mcp' } }, { cwd: dir, connectTimeoutMs: 2_000 }).start();
    expect(set.statuses[0]).toMatchObject({ status: 'failed' });
    expect(set.tools).toEqual([]);
    await set.close();
  });
});
