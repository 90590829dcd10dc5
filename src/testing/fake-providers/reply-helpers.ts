import type { FakeReply, FakeToolCall, FakeUsage, RecordedRequest } from './types.js';

/** The reply's text deltas, dropping empty ones (providers never send them). */
export function textChunks(reply: FakeReply): string[] {
  if (reply.text === undefined) return [];
  const chunks = typeof reply.text === 'string' ? [reply.text] : [...reply.text];
  return chunks.filter((chunk) => chunk.length > 0);
}

/** The arguments text of a call: verbatim when given, else the input as JSON. */
export function argumentsText(call: FakeToolCall): string {
  return call.arguments ?? JSON.stringify(call.input ?? {});
}

/** Splits arguments in two deltas, as providers stream them in pieces. */
export function argumentDeltas(text: string): string[] {
  if (text.length < 2) return [text];
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

export function usageOf(reply: FakeReply, request: RecordedRequest): FakeUsage {
  if (reply.usage) return reply.usage;
  const output = textChunks(reply).join('').length + (reply.toolCalls ?? []).reduce((sum, call) => sum + argumentsText(call).length, 0);
  return { inputTokens: Math.ceil(JSON.stringify(request.body ?? {}).length / 4), outputTokens: Math.max(1, Math.ceil(output / 4)) };
}

export function modelOf(request: RecordedRequest): string {
  return typeof request.body?.model === 'string' ? request.body.model : 'fake-model';
}

export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.startsWith('Bearer ') ? value.slice('Bearer '.length) : undefined;
}
