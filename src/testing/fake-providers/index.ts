// Fake model provider servers for tests: loopback HTTP servers that speak the real wire formats,
// so agents are tested through the real provider packages without a key or a network.
import { anthropicMessages } from './anthropic-messages.js';
import { FakeProviderServer, type FakeProviderServerOptions } from './fake-provider-server.js';
import { openaiChatCompletions } from './openai-chat-completions.js';
import { openaiResponses } from './openai-responses.js';

export { FakeProviderServer } from './fake-provider-server.js';
export type { FakeProviderServerOptions } from './fake-provider-server.js';
export type { FakeTurn, FakeTurnSource, FakeReply, FakeHttpError, FakeToolCall, FakeUsage, RecordedRequest } from './types.js';

/**
 * Starts a fake Anthropic Messages API. Give `server.url` as the base URL
 * (`resolveModel('anthropic:…', { baseUrl: server.url })` or ANTHROPIC_BASE_URL).
 *
 * @example
 * const server = await startFakeAnthropic({ apiKey: 'test-key' });
 * server.enqueue({ text: ['Hel', 'lo'] }, { status: 429, headers: { 'retry-after': '1' } });
 */
export function startFakeAnthropic(options?: FakeProviderServerOptions): Promise<FakeProviderServer> {
  return FakeProviderServer.start([anthropicMessages], options);
}

/**
 * Starts a fake OpenAI API serving both `/v1/responses` (what `openai(name)` speaks) and
 * `/v1/chat/completions` (what OpenAI-compatible servers speak), from one turn queue.
 */
export function startFakeOpenAI(options?: FakeProviderServerOptions): Promise<FakeProviderServer> {
  return FakeProviderServer.start([openaiResponses, openaiChatCompletions], options);
}
