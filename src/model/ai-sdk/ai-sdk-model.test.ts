import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeProviderServer } from '../../testing/fake-providers/index.js';
import { resolveModel } from '../resolve-model.js';
import type { Message, Model, ModelStreamPart, ToolSpec } from '../types.js';

const readFile: ToolSpec = {
  name: 'Read',
  description: 'Reads a file.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
};

async function collect(stream: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

function text(parts: ModelStreamPart[]): string {
  return parts.map((p) => (p.type === 'text-delta' ? p.text : '')).join('');
}

/** Where each wire format puts a tool result in the next request. */
interface Provider {
  name: string;
  start(options: { apiKey: string }): Promise<FakeProviderServer>;
  model(server: FakeProviderServer, key: string): Model;
  path: string;
  /** Events up to and including the first text delta of a reply with text. */
  eventsThroughFirstText: number;
  toolResultIn(body: any): { callId: string; content: string; isError?: boolean } | undefined;
  toolCallsIn(body: any): Array<{ id: string; name: string; input: unknown }>;
  /** Checks where the wire format put a tool result's image (call_img) next to a plain result (call_txt). */
  expectImageResult(body: any): void;
}

const PNG = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');

const providers: Provider[] = [
  {
    name: 'anthropic (Messages SSE)',
    start: startFakeAnthropic,
    model: (server, key) => resolveModel('anthropic:claude-sonnet-4-5', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: key } }),
    path: '/v1/messages',
    eventsThroughFirstText: 4,
    toolResultIn(body) {
      const blocks = body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
      const result = blocks.find((b: any) => b.type === 'tool_result');
      if (!result) return undefined;
      const content = typeof result.content === 'string' ? result.content : result.content.map((c: any) => c.text).join('');
      return { callId: result.tool_use_id, content, isError: result.is_error };
    },
    toolCallsIn(body) {
      const blocks = body.messages.flatMap((m: any) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content : []));
      return blocks.filter((b: any) => b.type === 'tool_use').map((b: any) => ({ id: b.id, name: b.name, input: b.input }));
    },
    expectImageResult(body) {
      // Both results in the one user turn after the tool calls; the image inside its tool_result.
      const turn = body.messages.at(-1);
      expect(turn.role).toBe('user');
      expect(turn.content).toEqual([
        {
          type: 'tool_result',
          tool_use_id: 'call_img',
          content: [
            { type: 'text', text: 'a screenshot [image image/png, 8 bytes]' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        { type: 'tool_result', tool_use_id: 'call_txt', content: 'plain' },
      ]);
    },
  },
  {
    name: 'openai (Responses SSE)',
    start: startFakeOpenAI,
    model: (server, key) => resolveModel('openai:gpt-4o', { baseUrl: server.url, env: { OPENAI_API_KEY: key } }),
    path: '/v1/responses',
    eventsThroughFirstText: 5,
    toolResultIn(body) {
      const item = body.input.find((i: any) => i.type === 'function_call_output');
      return item ? { callId: item.call_id, content: item.output } : undefined;
    },
    toolCallsIn(body) {
      return body.input
        .filter((i: any) => i.type === 'function_call')
        .map((i: any) => ({ id: i.call_id, name: i.name, input: JSON.parse(i.arguments) }));
    },
    expectImageResult(body) {
      const outputs = body.input.filter((i: any) => i.type === 'function_call_output');
      expect(outputs).toEqual([
        {
          type: 'function_call_output',
          call_id: 'call_img',
          output: [
            { type: 'input_text', text: 'a screenshot [image image/png, 8 bytes]' },
            { type: 'input_image', image_url: `data:image/png;base64,${PNG}` },
          ],
        },
        { type: 'function_call_output', call_id: 'call_txt', output: 'plain' },
      ]);
      expect(body.input.at(-1)).toEqual(outputs.at(-1));
    },
  },
  {
    name: 'openai-compatible (Chat Completions SSE)',
    start: startFakeOpenAI,
    model: (server, key) => resolveModel('openai-compatible:llama3.1:8b', { baseUrl: server.url, env: { SAGE_OPENAI_COMPATIBLE_API_KEY: key } }),
    path: '/v1/chat/completions',
    eventsThroughFirstText: 2,
    toolResultIn(body) {
      const message = body.messages.find((m: any) => m.role === 'tool');
      return message ? { callId: message.tool_call_id, content: message.content } : undefined;
    },
    toolCallsIn(body) {
      return body.messages
        .filter((m: any) => m.role === 'assistant' && m.tool_calls)
        .flatMap((m: any) => m.tool_calls.map((c: any) => ({ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) })));
    },
    expectImageResult(body) {
      // Tool messages are text: both follow the assistant's calls, then one user message carries the image.
      expect(body.messages.slice(-3)).toEqual([
        { role: 'tool', tool_call_id: 'call_img', content: 'a screenshot [image image/png, 8 bytes]\n[The image of this result is in the next user message.]' },
        { role: 'tool', tool_call_id: 'call_txt', content: 'plain' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '[The image returned by Screenshot (call call_img):]' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ]);
      expect(JSON.stringify(body.messages.filter((m: any) => m.role === 'tool'))).not.toContain(PNG);
    },
  },
];

describe.each(providers)('the AI SDK adapter through $name', (provider) => {
  let server: FakeProviderServer;
  let model: Model;
  const key = 'test-key';

  beforeEach(async () => {
    server = await provider.start({ apiKey: key });
    model = provider.model(server, key);
  });
  afterEach(() => server.close());

  it('streams text deltas in order and reports usage', async () => {
    server.enqueue({ text: ['Hel', 'lo, ', 'world'], usage: { inputTokens: 42, outputTokens: 7 } });
    const parts = await collect(model.stream({ system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }], tools: [] }));

    expect(parts.filter((p) => p.type === 'text-delta').map((p) => (p as { text: string }).text)).toEqual(['Hel', 'lo, ', 'world']);
    expect(parts.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 42, outputTokens: 7 } });
    expect(server.lastRequest().path).toBe(provider.path);
    expect(server.lastRequest().body.stream).toBe(true);
    expect(JSON.stringify(server.lastRequest().body)).toContain('Be brief.');
  });

  it('completes a tool-call round trip: the next request carries the result in the wire format', async () => {
    server.enqueue({ text: 'Reading it.', toolCalls: [{ id: 'call_1', name: 'Read', input: { path: 'a.txt' } }] }, { text: 'The file says hi.' });
    const messages: Message[] = [{ role: 'user', content: 'What is in a.txt?' }];

    const first = await collect(model.stream({ messages, tools: [readFile] }));
    const calls = first.flatMap((p) => (p.type === 'tool-call' ? [p.call] : []));
    expect(calls).toEqual([{ id: 'call_1', name: 'Read', input: { path: 'a.txt' } }]);
    expect(first.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    expect(JSON.stringify(server.lastRequest().body)).toContain('Reads a file.');

    messages.push({ role: 'assistant', content: text(first), toolCalls: calls });
    messages.push({ role: 'tool', toolCallId: 'call_1', toolName: 'Read', content: 'hi' });
    const second = await collect(model.stream({ messages, tools: [readFile] }));

    expect(text(second)).toBe('The file says hi.');
    const body = server.lastRequest().body;
    expect(provider.toolCallsIn(body)).toEqual([{ id: 'call_1', name: 'Read', input: { path: 'a.txt' } }]);
    expect(provider.toolResultIn(body)).toMatchObject({ callId: 'call_1', content: 'hi' });
  });

  it('sends a tool result image in the wire format for tool results, next to a plain result', async () => {
    server.enqueue({ text: 'I see a PNG.' });
    const messages: Message[] = [
      { role: 'user', content: 'Take a screenshot and read a.txt' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_img', name: 'Screenshot', input: {} }, { id: 'call_txt', name: 'Read', input: { path: 'a.txt' } }] },
      { role: 'tool', toolCallId: 'call_img', toolName: 'Screenshot', content: 'a screenshot [image image/png, 8 bytes]', images: [{ mediaType: 'image/png', data: PNG }] },
      { role: 'tool', toolCallId: 'call_txt', toolName: 'Read', content: 'plain' },
    ];
    const parts = await collect(model.stream({ messages, tools: [readFile] }));
    expect(text(parts)).toBe('I see a PNG.');
    provider.expectImageResult(server.lastRequest().body);
  });

  it('emits parallel tool calls as separate calls, in order', async () => {
    server.enqueue({
      toolCalls: [
        { id: 'call_a', name: 'Read', input: { path: 'a.txt' } },
        { id: 'call_b', name: 'Read', input: { path: 'b.txt' } },
      ],
    });
    const parts = await collect(model.stream({ messages: [{ role: 'user', content: 'Read both.' }], tools: [readFile] }));
    expect(parts.flatMap((p) => (p.type === 'tool-call' ? [p.call] : []))).toEqual([
      { id: 'call_a', name: 'Read', input: { path: 'a.txt' } },
      { id: 'call_b', name: 'Read', input: { path: 'b.txt' } },
    ]);
  });

  it('marks malformed tool arguments with an inputError written for the model', async () => {
    server.enqueue({ toolCalls: [{ id: 'call_bad', name: 'Read', arguments: '{"path": "a.txt"' }] });
    const parts = await collect(model.stream({ messages: [{ role: 'user', content: 'Read a.txt' }], tools: [readFile] }));
    const call = parts.flatMap((p) => (p.type === 'tool-call' ? [p.call] : []))[0];
    expect(call).toMatchObject({ id: 'call_bad', name: 'Read', input: '{"path": "a.txt"' });
    expect(call?.inputError).toMatch(/not valid JSON.*Call the tool again/);
  });

  it('sends an error tool result as an error, and a malformed call back as an empty object', async () => {
    server.enqueue({ text: 'ok' });
    const messages: Message[] = [
      { role: 'user', content: 'Read a.txt' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_bad', name: 'Read', input: '{"path": ', inputError: 'bad json' }] },
      { role: 'tool', toolCallId: 'call_bad', toolName: 'Read', content: 'Your arguments were not valid JSON.', isError: true },
    ];
    await collect(model.stream({ messages, tools: [readFile] }));
    const body = server.lastRequest().body;
    expect(provider.toolCallsIn(body)).toEqual([{ id: 'call_bad', name: 'Read', input: {} }]);
    const result = provider.toolResultIn(body);
    expect(result?.content).toContain('Your arguments were not valid JSON.');
    if (provider.path === '/v1/messages') expect(result?.isError).toBe(true);
  });

  it('refuses a wrong key with a typed authentication error naming the variable', async () => {
    const wrong = provider.model(server, 'wrong-key');
    const error = await collect(wrong.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_auth_failed', status: 401, retryable: false });
    expect((error as Error).message).toMatch(/ANTHROPIC_API_KEY|OPENAI_API_KEY|SAGE_OPENAI_COMPATIBLE_API_KEY/);
  });

  it('turns a 429 into a rate-limit error carrying retry-after', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '2' } });
    const error = await collect(model.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_rate_limited', status: 429, retryAfterMs: 2000, retryable: true });
  });

  it('turns a 500 into a retryable unavailable error', async () => {
    server.enqueue({ status: 500 });
    const error = await collect(model.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_unavailable', status: 500, retryable: true });
  });

  it('raises a stream interruption, never a finish, when the connection is cut midway', async () => {
    server.enqueue({ text: ['one ', 'two ', 'three'], cutAfterEvents: 3 });
    const seen: ModelStreamPart[] = [];
    const error = await (async () => {
      for await (const part of model.stream({ messages: [{ role: 'user', content: 'Count' }], tools: [] })) seen.push(part);
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_stream_interrupted' });
    expect(seen.some((p) => p.type === 'finish')).toBe(false);
    expect((error as { deliveredOutput: boolean }).deliveredOutput).toBe(seen.length > 0);
    expect((error as { retryable: boolean }).retryable).toBe(seen.length === 0);
  });

  it('marks a cut after text was streamed as delivered, hence not retryable', async () => {
    server.enqueue({ text: ['one ', 'two ', 'three'], cutAfterEvents: provider.eventsThroughFirstText });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const part of model.stream({ messages: [{ role: 'user', content: 'Count' }], tools: [] })) {
        if (part.type === 'text-delta') seen.push(part.text);
      }
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['one ']);
    expect(error).toMatchObject({ code: 'model_stream_interrupted', deliveredOutput: true, retryable: false });
  });

  it('raises a stream interruption when the body ends cleanly before completion', async () => {
    // Three events in: past the headers, before any wire format's completion signal.
    server.enqueue({ text: ['one ', 'two'], cutAfterEvents: 3, cutMode: 'end' });
    const error = await collect(model.stream({ messages: [{ role: 'user', content: 'Count' }], tools: [] })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_stream_interrupted' });
  });

  it('stops the request when the signal aborts mid-stream', async () => {
    server.enqueue({ text: ['a', 'b', 'c', 'd'], eventDelayMs: 30 });
    const controller = new AbortController();
    const seen: string[] = [];
    const error = await (async () => {
      for await (const part of model.stream({ messages: [{ role: 'user', content: 'Go' }], tools: [], signal: controller.signal })) {
        if (part.type === 'text-delta') {
          seen.push(part.text);
          controller.abort(new Error('cancelled by test'));
        }
      }
    })().catch((e: unknown) => e);
    expect((error as Error).message).toBe('cancelled by test');
    expect(seen).toEqual(['a']);
  });
});
