import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeProviderServer } from '../testing/fake-providers/index.js';
import { parseModelSpec, resolveModel } from './resolve-model.js';

let server: FakeProviderServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function firstText(spec: string, options: Parameters<typeof resolveModel>[1]): Promise<string> {
  let text = '';
  for await (const part of resolveModel(spec, options).stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [] })) {
    if (part.type === 'text-delta') text += part.text;
  }
  return text;
}

describe('resolveModel', () => {
  it('names the missing key variable and points to the offline demo', () => {
    expect(() => resolveModel('anthropic:claude-sonnet-4-5', { env: {} })).toThrowError(
      expect.objectContaining({ code: 'model_api_key_missing', keyVariable: 'ANTHROPIC_API_KEY', message: expect.stringMatching(/set ANTHROPIC_API_KEY.*sage demo.*offline/) }),
    );
    expect(() => resolveModel('openai:gpt-4o', { env: { OPENAI_API_KEY: '  ' } })).toThrowError(expect.objectContaining({ keyVariable: 'OPENAI_API_KEY' }));
  });

  it('lists the valid providers for an unknown one', () => {
    expect(() => resolveModel('gemini:pro', { env: {} })).toThrowError(
      expect.objectContaining({ code: 'model_spec_invalid', message: expect.stringMatching(/unknown provider "gemini".*anthropic:<name>, openai:<name>, openai-compatible:<name>, scripted:<name>/) }),
    );
  });

  it('refuses a missing model name and an OpenAI-compatible spec without a base URL', () => {
    expect(() => resolveModel('anthropic:', { env: { ANTHROPIC_API_KEY: 'k' } })).toThrowError(/model name is missing/);
    expect(() => resolveModel('openai-compatible:llama3', { env: {} })).toThrowError(/--base-url/);
  });

  it('splits at the first colon, so Ollama tags survive', () => {
    expect(parseModelSpec('openai-compatible:llama3.1:8b')).toEqual({ provider: 'openai-compatible', name: 'llama3.1:8b', spec: 'openai-compatible:llama3.1:8b' });
  });

  it('refuses a spec with a leading space instead of trimming it into another provider', () => {
    expect(() => resolveModel(' scripted:/etc/passwd', { env: {} })).toThrowError(expect.objectContaining({ code: 'model_spec_invalid', message: expect.stringMatching(/whitespace/) }));
    expect(() => resolveModel('Anthropic:claude-sonnet-4-5', { env: { ANTHROPIC_API_KEY: 'k' } })).toThrowError(/unknown provider/);
  });

  it('sets the context window from the model family, or from the option', () => {
    expect(resolveModel('anthropic:claude-sonnet-4-5', { env: { ANTHROPIC_API_KEY: 'k' } }).contextWindow).toBe(200_000);
    expect(resolveModel('openai:gpt-4o-mini', { env: { OPENAI_API_KEY: 'k' } }).contextWindow).toBe(128_000);
    expect(resolveModel('openai-compatible:my-finetune', { baseUrl: 'http://localhost:1/v1', env: {} }).contextWindow).toBeUndefined();
    expect(resolveModel('openai-compatible:my-finetune', { baseUrl: 'http://localhost:1/v1', env: {}, contextWindow: 8192 }).contextWindow).toBe(8192);
  });

  it('reads ANTHROPIC_BASE_URL from env, adding /v1 as Anthropic SDKs expect it absent', async () => {
    server = await startFakeAnthropic({ apiKey: 'k' });
    server.enqueue({ text: 'via env' });
    const root = server.url.replace(/\/v1$/, '');
    expect(await firstText('anthropic:claude-sonnet-4-5', { env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: root } })).toBe('via env');
    expect(server.lastRequest().headers['x-api-key']).toBe('k');
  });

  it('reads OPENAI_BASE_URL from env and speaks the Responses API for openai:', async () => {
    server = await startFakeOpenAI({ apiKey: 'k' });
    server.enqueue({ text: 'responses' });
    expect(await firstText('openai:gpt-4o', { env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: server.url } })).toBe('responses');
    expect(server.lastRequest().path).toBe('/v1/responses');
  });

  it('sends the OpenAI-compatible key as a bearer token, preferring SAGE_OPENAI_COMPATIBLE_API_KEY, and asks for usage', async () => {
    server = await startFakeOpenAI({ apiKey: 'local' });
    server.enqueue({ text: 'chat' });
    const env = { SAGE_OPENAI_COMPATIBLE_API_KEY: 'local', OPENAI_API_KEY: 'the-openai-one' };
    expect(await firstText('openai-compatible:qwen2.5', { baseUrl: server.url, env })).toBe('chat');
    expect(server.lastRequest()).toMatchObject({ path: '/v1/chat/completions', headers: { authorization: 'Bearer local' } });
    expect(server.lastRequest().body.stream_options).toEqual({ include_usage: true });
  });

  it('sends no key to an OpenAI-compatible server when none is set', async () => {
    server = await startFakeOpenAI();
    server.enqueue({ text: 'no key' });
    expect(await firstText('openai-compatible:qwen2.5', { baseUrl: server.url, env: {} })).toBe('no key');
    expect(server.lastRequest().headers.authorization).toBeUndefined();
  });

  it('loads a scripted model from its file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sage-script-'));
    const file = join(dir, 'demo.json');
    await writeFile(file, JSON.stringify({ turns: [{ text: 'scripted hello' }] }));
    expect(await firstText(`scripted:${file}`, { env: {} })).toBe('scripted hello');
  });
});
