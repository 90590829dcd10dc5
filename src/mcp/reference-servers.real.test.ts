import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeAnthropic, type FakeProviderServer, type FakeReply, type RecordedRequest } from '../testing/fake-providers/index.js';
import { recordObserved } from '../test-support/observed.js';
import { binForSuite } from '../test-support/real-agents.js';
import { eventsOf, runSage, sageBin, until } from '../test-support/run-sage.js';

/**
 * The MCP reference servers (pinned in test/agents/pinned.json), server-everything over stdio and
 * server-filesystem on the run's folder, as the MCP servers of Sage's own runs, driven through the
 * built `sage`. The model is the AI SDK's Anthropic provider against a loopback Messages API fake,
 * so what a tool's result becomes in the model's request is checked on the wire.
 */
const everything = binForSuite('server-everything');
const filesystem = binForSuite('server-filesystem');
let dir: string;
let project: string;
let db: string;
let config: string;
let fake: FakeProviderServer;
const plans = new Map<string, Array<{ name: string; input: Record<string, unknown> }>>();
/** What each server showed, for `npm run agents:refresh`. */
const observed: Record<'server-everything' | 'server-filesystem', Record<string, Record<string, string[]>>> = { 'server-everything': {}, 'server-filesystem': {} };

type Block = Record<string, unknown>;
const messagesOf = (request: RecordedRequest) => ((request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? []);
const blocksOf = (content: unknown): Block[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Block[]));

function reply(request: RecordedRequest): FakeReply {
  const messages = messagesOf(request);
  const start = messages.findLastIndex((m) => m.role === 'user' && blocksOf(m.content).some((b) => typeof b.text === 'string' && /PLAN:\w+/.test(b.text)));
  if (start < 0) return { text: 'ok' };
  const key = /PLAN:(\w+)/.exec(JSON.stringify(messages[start]!.content))![1]!;
  const results = messages.slice(start).flatMap((m) => (m.role === 'user' ? blocksOf(m.content) : [])).filter((b) => b.type === 'tool_result');
  const next = plans.get(key)?.[results.length];
  if (next) return { toolCalls: [{ id: `toolu_${key}_${results.length}`, name: next.name, input: next.input }] };
  return { text: `FAKE_DONE after ${results.length} tool results` };
}

beforeAll(async () => {
  if (!everything || !filesystem) return;
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-mcp-ref-')));
  project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'notes.txt'), 'notes of the project\n');
  db = join(dir, 'sage.db');
  config = join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: everything, args: ['stdio'] }, fs: { command: filesystem, args: [project] } } }));
  fake = await startFakeAnthropic({ whenEmpty: reply });
});

afterAll(async () => {
  if (everything && filesystem) for (const [program, behaviours] of Object.entries(observed)) recordObserved(program as keyof typeof observed, behaviours);
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const env = () => ({ SAGE_HOME: dir, SAGE_DATABASE_URL: '', HOME: dir, ANTHROPIC_BASE_URL: fake.url.replace(/\/v1$/, ''), ANTHROPIC_API_KEY: 'sk-ant-fake' });
const sage = (args: string[]) => runSage([...args, '--db', db], { cwd: project, env: env() });
const model = () => ['--model', 'anthropic:claude-sonnet-4-5', '--mcp-config', config];

describe.skipIf(!everything || !filesystem)('the MCP reference servers in Sage\'s runs (the real servers)', { timeout: 240_000 }, () => {
  test('sage mcp list starts both servers and lists their tools under mcp__<server>__<tool>', async () => {
    const result = await runSage(['mcp', 'list', '--mcp-config', config], { cwd: project, env: env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/everything\s+stdio\s+connected/);
    expect(result.stdout).toMatch(/fs\s+stdio\s+connected/);
    const listed = (server: string) => [...result.stdout.matchAll(new RegExp(`^\\s+(mcp__${server}__\\S+)\\s+(\\S+)`, 'gm'))].map((m) => `${m[1]} ${m[2]}`);
    observed['server-everything'].list = { tools: listed('everything') };
    observed['server-filesystem'].list = { tools: listed('fs') };
    for (const tool of ['mcp__everything__echo', 'mcp__everything__get-tiny-image', 'mcp__everything__trigger-elicitation-request', 'mcp__fs__read_text_file', 'mcp__fs__write_file']) {
      expect(result.stdout).toContain(tool);
    }
  });

  test('a deny rule and an ask rule on mcp__<server>__<tool>; an image result reaches the model as an image block', async () => {
    plans.set('rules', [
      { name: 'mcp__everything__get-env', input: {} },
      { name: 'mcp__everything__echo', input: { message: 'hello from the model' } },
      { name: 'mcp__everything__get-tiny-image', input: {} },
      { name: 'mcp__fs__read_text_file', input: { path: join(project, 'notes.txt') } },
    ]);
    const before = fake.requests.length;
    const result = await sage(['run', ...model(), '--json', '--non-interactive', '--auto', 'allow', '--allow', 'mcp__everything', '--allow', 'mcp__fs', '--deny', 'mcp__everything__get-env', '--ask', 'mcp__everything__echo', 'PLAN:rules use the tools']);
    expect(result.code).toBe(0);
    const events = eventsOf(result.stdout);
    const decided = (tool: string) => events.filter((e) => e.type === 'permission.decided' && e.data.toolName === tool).map((e) => e.data);
    // The deny rule: refused without asking, never run.
    expect(decided('mcp__everything__get-env')).toEqual([expect.objectContaining({ behavior: 'deny', rule: 'mcp__everything__get-env' })]);
    // The ask rule beats the server-wide allow: the person (here the terminal's --auto) is asked, once.
    expect(decided('mcp__everything__echo')[0]).toMatchObject({ behavior: 'ask', rule: 'mcp__everything__echo' });
    const asked = events.filter((e) => e.type === 'interaction.requested').map((e) => (e.data.request as { toolName?: string }).toolName);
    expect(asked).toEqual(['mcp__everything__echo']);
    const results = fake.requests.slice(before).flatMap((r) => messagesOf(r).flatMap((m) => (m.role === 'user' ? blocksOf(m.content) : []))).filter((b) => b.type === 'tool_result');
    const resultOf = (id: string) => results.find((b) => b.tool_use_id === id);
    expect(JSON.stringify(resultOf('toolu_rules_0'))).not.toContain('PATH');
    expect(JSON.stringify(resultOf('toolu_rules_1'))).toContain('Echo: hello from the model');
    // The image: an image block of the tool result in the Messages request, the PNG's bytes as base64.
    const image = blocksOf(resultOf('toolu_rules_2')?.content).find((b) => b.type === 'image') as { source?: { type: string; media_type: string; data: string } } | undefined;
    expect(image?.source).toMatchObject({ type: 'base64', media_type: 'image/png' });
    expect(Buffer.from(image!.source!.data, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(JSON.stringify(resultOf('toolu_rules_3'))).toContain('notes of the project');
  });

  test('an elicitation (13 fields) answered by sage respond from another process: the answers, defaults and optional fields reach the server', async () => {
    plans.set('elicit', [{ name: 'mcp__everything__trigger-elicitation-request', input: {} }]);
    const before = fake.requests.length;
    const started = await sage(['run', ...model(), '--allow', 'mcp__everything', '--detach', 'PLAN:elicit ask me']);
    expect(started.code).toBe(0);
    const pending = await until('the elicitation', async () => {
      const listed = await sage(['interactions', 'list', '--pending', '--json']);
      const rows = JSON.parse(listed.stdout || '[]') as Array<Record<string, unknown>>;
      return rows.length ? rows : undefined;
    });
    expect(pending).toHaveLength(1);
    const fields = /fields: ([^)]*)\)/.exec(String(pending[0]!.answerWith))?.[1]?.split(', ');
    expect(fields).toHaveLength(13);
    observed['server-everything'].elicitation = { fields: fields! };
    const answered = await sage(['respond', String(pending[0]!.id), '--answer', 'name=Ada Lovelace', '--answer', 'check=yes', '--answer', 'integer=7',
      '--answer', 'titledMultipleSelectEnum=fish-2', '--answer', 'titledMultipleSelectEnum=fish-3']);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain('completed');
    const result = await until('the tool result reaching the model', () => fake.requests.slice(before)
      .flatMap((r) => messagesOf(r).flatMap((m) => (m.role === 'user' ? blocksOf(m.content) : [])))
      .find((b) => b.type === 'tool_result' && b.tool_use_id === 'toolu_elicit_0'));
    // What the server got: the given answers, the form's defaults for the rest, the optional ones without
    // a default left out (the server echoes its raw result).
    const raw = /Raw result: (\{[\s\S]*\})/.exec(String(result.content))?.[1];
    expect(JSON.parse(raw!)).toEqual({
      action: 'accept',
      content: {
        name: 'Ada Lovelace',
        check: true,
        firstLine: 'It was a dark and stormy night.',
        integer: 7,
        number: 3.14,
        untitledSingleSelectEnum: 'Monica',
        untitledMultipleSelectEnum: ['Guitar'],
        titledSingleSelectEnum: 'hero-1',
        titledMultipleSelectEnum: ['fish-2', 'fish-3'],
        legacyTitledEnum: 'pet-1',
      },
    });
  });

  /** Starts a detached run whose model calls the elicitation tool; resolves with its pending form's id. */
  async function pendingElicitation(key: string): Promise<string> {
    plans.set(key, [{ name: 'mcp__everything__trigger-elicitation-request', input: {} }]);
    const started = await sage(['run', ...model(), '--allow', 'mcp__everything', '--detach', `PLAN:${key} ask me`]);
    expect(started.code).toBe(0);
    return until(`the elicitation of ${key}`, async () => {
      const rows = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout || '[]') as Array<{ id: string }>;
      return rows.find((r) => r.id.includes(`toolu_${key}_0`))?.id;
    });
  }
  const rawResultOf = (key: string) => until(`the tool result of ${key}`, () => {
    const block = fake.requests.flatMap((r) => messagesOf(r).flatMap((m) => (m.role === 'user' ? blocksOf(m.content) : []))).find((b) => b.type === 'tool_result' && b.tool_use_id === `toolu_${key}_0`);
    const raw = block ? /Raw result: (\{[\s\S]*\})/.exec(String(block.content))?.[1] : undefined;
    return raw ? (JSON.parse(raw) as { action: string; content?: Record<string, unknown> }) : undefined;
  });

  test.skipIf(!existsSync('/usr/bin/chromium'))('elicitations answered over HTTP (sage serve POST /interactions/:id/respond) and on the web page, whose form renders and submits', async () => {
    const http = await pendingElicitation('http');
    const web = await pendingElicitation('web');
    const serve = spawn(process.execPath, [sageBin, 'serve', '--db', db, '--port', '0'], { cwd: project, env: { ...process.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let out = '';
        serve.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (found) resolve(found[1]!);
        });
        serve.on('exit', () => reject(new Error(`sage serve exited: ${out}`)));
      });
      // Over HTTP: the answers as the web page sends them, one per field, and the decision to send them.
      const answer = { requestId: http, kind: 'combined', responses: { name: { kind: 'input', text: 'Grace Hopper' }, untitledSingleSelectEnum: { kind: 'select', selected: ['Joey'] }, __decision: { kind: 'confirm', confirmed: true } } };
      const response = await fetch(`${base}/interactions/${encodeURIComponent(http)}/respond`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer) });
      expect(response.status).toBe(200);
      // The API takes the answers as sent: a field the client left out stays out (the web page sends the form's defaults).
      expect(await rawResultOf('http')).toEqual({ action: 'accept', content: { name: 'Grace Hopper', untitledSingleSelectEnum: 'Joey' } });
      // The web page: the run's page shows the form with its 13 fields; a person types the one required field and accepts.
      const page = await browser.newPage();
      await page.goto(`${base}/#/runs/${encodeURIComponent(web.split(':')[0]!)}`);
      const form = page.locator('[data-interaction]').first();
      await form.waitFor({ timeout: 60_000 });
      const keys = ['name', 'check', 'firstLine', 'email', 'homepage', 'birthdate', 'integer', 'number', 'untitledSingleSelectEnum',
        'untitledMultipleSelectEnum', 'titledSingleSelectEnum', 'titledMultipleSelectEnum', 'legacyTitledEnum'];
      for (const key of keys) await page.locator(`[id="item-${web}-${key}"]`).waitFor();
      await page.locator(`[id="item-${web}-name-field"]`).fill('Katherine Johnson');
      await form.locator('label:has-text("Accept") input[type="radio"]').check();
      await form.locator('button:has-text("Submit"):not([disabled])').click();
      expect((await rawResultOf('web'))).toMatchObject({ action: 'accept', content: { name: 'Katherine Johnson', firstLine: 'It was a dark and stormy night.', titledSingleSelectEnum: 'hero-1' } });
    } finally {
      await browser.close();
      const exited = new Promise((resolve) => serve.once('exit', resolve));
      serve.kill();
      await exited;
    }
  });
});
