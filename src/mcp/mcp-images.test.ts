/**
 * An MCP tool's image reaches the model as an image: a run whose model is a real provider package
 * talking to a loopback fake (src/testing/fake-providers) calls Sage's test MCP server over stdio;
 * the next request body carries the image where that wire format puts a tool result's content.
 * Events and the tool history carry the text that names the image, never its bytes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DurableRunner } from '../durable/durable-runner.js';
import { appendLineTool } from '../durable/test-support/append-line-tool.js';
import { driveToEnd } from '../durable/test-support/drive-to-end.js';
import type { RunEvent } from '../events/index.js';
import { run } from '../loop/run.js';
import { resolveModel } from '../model/resolve-model.js';
import { ScriptedModel } from '../model/scripted-model.js';
import { openSqliteStore } from '../store/open-store.js';
import type { Model } from '../model/types.js';
import type { Tool } from '../tool/types.js';
import { startFakeAnthropic, startFakeOpenAI, type FakeProviderServer } from '../testing/fake-providers/index.js';
import { McpToolset } from './tools.js';

/** The 1×1 PNG test-server.mjs returns from its media tool. */
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';
const SERVER = fileURLToPath(new URL('./test-support/test-server.mjs', import.meta.url));
const TEXT = [
  'here is a picture',
  '[image image/png, 70 bytes]',
  '[image image/svg+xml, 41 bytes: not shown: models take PNG, JPEG, GIF and WebP images]',
  '[resource link: report file:///tmp/report.txt (text/plain)]',
].join('\n');

interface Case {
  name: string;
  start: typeof startFakeAnthropic;
  model(server: FakeProviderServer): Model;
  /** Checks the request that followed the tool call. */
  expectImage(body: any): void;
}

const cases: Case[] = [
  {
    name: 'anthropic: an image block inside the tool_result',
    start: startFakeAnthropic,
    model: (server) => resolveModel('anthropic:claude-sonnet-4-5', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'k' } }),
    expectImage(body) {
      const last = body.messages.at(-1);
      expect(last.role).toBe('user');
      expect(last.content).toEqual([
        {
          type: 'tool_result',
          tool_use_id: 'call_1',
          content: [
            { type: 'text', text: TEXT },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: RED_PIXEL_PNG } },
          ],
        },
      ]);
    },
  },
  {
    name: 'openai (Responses): an input_image in the function_call_output',
    start: startFakeOpenAI,
    model: (server) => resolveModel('openai:gpt-4o', { baseUrl: server.url, env: { OPENAI_API_KEY: 'k' } }),
    expectImage(body) {
      expect(body.input.at(-1)).toEqual({
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: TEXT },
          { type: 'input_image', image_url: `data:image/png;base64,${RED_PIXEL_PNG}` },
        ],
      });
    },
  },
  {
    name: 'openai-compatible (Chat Completions): a text tool message, then a user message with image_url',
    start: startFakeOpenAI,
    model: (server) => resolveModel('openai-compatible:llava', { baseUrl: server.url, env: {} }),
    expectImage(body) {
      expect(body.messages.slice(-2)).toEqual([
        { role: 'tool', tool_call_id: 'call_1', content: `${TEXT}\n[The image of this result is in the next user message.]` },
        {
          role: 'user',
          content: [
            { type: 'text', text: '[The image returned by mcp__t__media (call call_1):]' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${RED_PIXEL_PNG}` } },
          ],
        },
      ]);
    },
  },
];

let dir: string;
let set: McpToolset;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sage-mcp-images-'));
  set = await new McpToolset({ t: { command: process.execPath, args: [SERVER] } }, { cwd: dir }).start();
});
afterAll(async () => {
  await set.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runWith(model: Model) {
  const r = run('Look at the picture.', { model, tools: set.tools, mode: { type: 'non-interactive', autoResponse: 'allow' }, cwd: dir });
  const events: RunEvent[] = [];
  for await (const event of r) events.push(event);
  return { outcome: await r.outcome, events };
}

describe.each(cases)('an MCP image through $name', (c) => {
  let server: FakeProviderServer;
  beforeAll(async () => {
    server = await c.start();
  });
  afterAll(() => server.close());

  it('is in the next request where the wire format puts tool results; events and history keep only its size note', async () => {
    server.enqueue({ toolCalls: [{ id: 'call_1', name: 'mcp__t__media', input: {} }] }, { text: 'A red pixel.' });
    const { outcome, events } = await runWith(c.model(server));

    expect(outcome.status).toBe('completed');
    expect(outcome.finalText).toBe('A red pixel.');
    expect(server.requests).toHaveLength(2);
    c.expectImage(server.requests[1]!.body);

    const toolMessage = outcome.messages.find((m) => m.role === 'tool');
    expect(toolMessage).toMatchObject({ content: TEXT, images: [{ mediaType: 'image/png', data: RED_PIXEL_PNG }] });
    const completed = events.find((e) => e.type === 'tool.completed');
    expect(completed?.data).toMatchObject({ toolName: 'mcp__t__media', isError: false, content: TEXT });
    expect(JSON.stringify(events)).not.toContain(RED_PIXEL_PNG);
    expect(outcome.toolHistory[0]!.result).toEqual({ content: TEXT, isError: false });
  });
});

it('any tool may return images: the loop keeps those a provider takes and names the others in the text; an error result keeps none', async () => {
  const chart: Tool<{ fail?: boolean }> = {
    name: 'Chart',
    description: 'Draws a chart.',
    inputSchema: z.object({ fail: z.boolean().optional() }),
    risk: 'LOW',
    readOnly: true,
    execute: async ({ fail }) => ({
      content: 'the chart',
      ...(fail ? { isError: true } : {}),
      images: [
        { mediaType: 'image/png', data: RED_PIXEL_PNG },
        { mediaType: 'image/tiff', data: RED_PIXEL_PNG },
      ],
    }),
  };
  const model = new ScriptedModel({ turns: [{ toolCalls: [{ name: 'Chart', input: {} }, { name: 'Chart', input: { fail: true } }] }, { text: 'done' }] });
  const r = run('Draw it.', { model, tools: [chart], mode: { type: 'non-interactive', autoResponse: 'allow' }, cwd: dir });
  const outcome = await r.outcome;
  const [ok, failed] = outcome.messages.filter((m) => m.role === 'tool');
  expect(ok).toEqual({
    role: 'tool',
    toolCallId: expect.any(String),
    toolName: 'Chart',
    content: 'the chart\n[image 2 of the result was not shown: mediaType image/tiff is not an image type models take (image/png, image/jpeg, image/gif, image/webp)]',
    images: [{ mediaType: 'image/png', data: RED_PIXEL_PNG }],
  });
  expect(failed).toEqual({ role: 'tool', toolCallId: expect.any(String), toolName: 'Chart', content: 'the chart', isError: true });
});

it('the scripted model plays its turns over an image result (it reads no images)', async () => {
  const model = new ScriptedModel({ turns: [{ toolCalls: [{ name: 'mcp__t__media', input: {} }] }, { text: 'done' }] });
  const { outcome } = await runWith(model);
  expect(outcome.status).toBe('completed');
  expect(outcome.finalText).toBe('done');
  expect(outcome.messages.find((m) => m.role === 'tool')).toMatchObject({ content: TEXT, images: [{ mediaType: 'image/png' }] });
});

it('a durable run keeps the image through its checkpoints: resumed in another runner, the model still gets it', async () => {
  const server = await startFakeAnthropic();
  const store = await openSqliteStore(path.join(dir, 'sage.db'));
  const log = path.join(dir, 'appended.log');
  const runners: DurableRunner[] = [];
  // Each runner is another "process": the same tools and model, rebuilt from the run's record.
  const runner = () => {
    const r = new DurableRunner({
      store,
      idleSuspendMs: 0,
      leaseMs: 2000,
      runtime: {
        createModel: () => resolveModel('anthropic:claude-sonnet-4-5', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'k' } }),
        tools: [...set.tools, appendLineTool(log)],
      },
    });
    runners.push(r);
    return r;
  };
  try {
    // One turn: the image, then a call whose ask suspends the run after the image result was checkpointed.
    server.enqueue(
      { toolCalls: [{ id: 'call_img', name: 'mcp__t__media', input: {} }, { id: 'call_line', name: 'AppendLine', input: { line: 'seen' } }] },
      { text: 'A red pixel, and the line is written.' },
    );
    const handle = await runner().start('Look, then write a line.', { model: 'anthropic:claude-sonnet-4-5' });
    expect((await handle.outcome).status).toBe('suspended');
    await driveToEnd(runner(), store, handle.runId);

    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'completed', finalText: 'A red pixel, and the line is written.' });
    expect(server.requests).toHaveLength(2);
    const turn = server.requests[1]!.body.messages.at(-1);
    expect(turn.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'call_img',
      content: [
        { type: 'text', text: TEXT },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: RED_PIXEL_PNG } },
      ],
    });
    expect(turn.content[1]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_line' });
    // The stored log of the conversation holds the image; the stored events only its size note.
    const loaded = await store.loadCheckpoint(handle.runId);
    expect(loaded!.messages.find((m) => (m as { role: string }).role === 'tool')).toMatchObject({ content: TEXT, images: [{ mediaType: 'image/png', data: RED_PIXEL_PNG }] });
    expect(JSON.stringify(await store.listToolCalls(handle.runId))).not.toContain(RED_PIXEL_PNG);
    const events = await store.readEvents(handle.runId);
    expect(JSON.stringify(events)).not.toContain(RED_PIXEL_PNG);
    // The image tool ran once, and the run was suspended again after it (at AppendLine's ask): the
    // image the model got came back from the checkpoint of the turn's results.
    const seqOf = (type: RunEvent['type'], tool: string) => events.filter((e) => e.type === type && (e.data as { toolName?: string }).toolName === tool).map((e) => e.seq);
    expect(seqOf('tool.completed', 'mcp__t__media')).toHaveLength(1);
    const suspendedAfterImage = events.filter((e) => e.type === 'run.suspended' && e.seq > seqOf('tool.completed', 'mcp__t__media')[0]! && e.seq < seqOf('tool.started', 'AppendLine')[0]!);
    expect(suspendedAfterImage).toHaveLength(1);
  } finally {
    for (const r of runners) await r.close({ suspend: false });
    await store.close();
    server.close();
  }
});
