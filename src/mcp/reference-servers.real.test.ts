import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeAnthropic, type FakeProviderServer, type FakeReply, type RecordedRequest } from '../testing/fake-providers/index.js';
import { binForSuite } from '../test-support/real-agents.js';
import { eventsOf, runSage, until } from '../test-support/run-sage.js';

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
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const env = () => ({ SAGE_HOME: dir, SAGE_DATABASE_URL: '', HOME: dir, ANTHROPIC_BASE_URL: fake.url.replace(/\/v1$/, ''), ANTHROPIC_API_KEY: 'sk-ant-fake' });
const sage = (args: string[]) => runSage([...args, '--db', db], { cwd: project, env: env() });
const model = () => ['--model', 'anthropic:claude-sonnet-4-5', '--mcp-config', config];

describe.skipIf(!everything || !filesystem)('the MCP reference servers in Sage\'s runs (the real servers)', { timeout: 120_000 }, () => {
  test('sage mcp list starts both servers and lists their tools under mcp__<server>__<tool>', async () => {
    const result = await runSage(['mcp', 'list', '--mcp-config', config], { cwd: project, env: env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/everything\s+stdio\s+connected/);
    expect(result.stdout).toMatch(/fs\s+stdio\s+connected/);
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
});
