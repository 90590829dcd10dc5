import { argumentDeltas, argumentsText, bearerToken, modelOf, textChunks, usageOf } from './reply-helpers.js';
import type { SseEvent, WireFormat } from './types.js';

/** Anthropic's error `type` per HTTP status, as its API answers. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const DEFAULT_MESSAGES: Record<string, string> = {
  authentication_error: 'invalid x-api-key',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
};

/**
 * Anthropic Messages API, streaming (POST /v1/messages with `stream: true`): the event sequence
 * message_start → content blocks (start, deltas, stop) → message_delta (stop reason, output
 * usage) → message_stop, with a ping after the first block starts, as the real API sends it.
 */
export const anthropicMessages: WireFormat = {
  path: '/v1/messages',

  isAuthorized(headers, apiKey) {
    const key = headers['x-api-key'] ?? bearerToken(headers.authorization);
    return key === apiKey;
  },

  errorBody(status, message) {
    const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    return { type: 'error', error: { type, message: message ?? DEFAULT_MESSAGES[type] ?? `HTTP ${status}` } };
  },

  events(reply, request, ids) {
    const usage = usageOf(reply, request);
    const calls = reply.toolCalls ?? [];
    const events: SseEvent[] = [];
    const send = (type: string, data: Record<string, unknown>) => events.push({ event: type, data: JSON.stringify({ type, ...data }) });

    send('message_start', {
      message: {
        id: ids.next('msg_fake_'),
        type: 'message',
        role: 'assistant',
        model: modelOf(request),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    });
    let index = 0;
    const chunks = textChunks(reply);
    if (chunks.length > 0) {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('ping', {});
      for (const text of chunks) send('content_block_delta', { index, delta: { type: 'text_delta', text } });
      send('content_block_stop', { index });
      index++;
    }
    for (const call of calls) {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: call.id ?? ids.next('toolu_fake_'), name: call.name, input: {} } });
      for (const partial_json of argumentDeltas(argumentsText(call))) {
        send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
      }
      send('content_block_stop', { index });
      index++;
    }
    const stopReason = reply.finish === 'length' ? 'max_tokens' : calls.length > 0 ? 'tool_use' : 'end_turn';
    send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.outputTokens } });
    send('message_stop', {});
    return events;
  },
};
