import { openaiErrorBody, openaiIsAuthorized } from './openai-errors.js';
import { argumentDeltas, argumentsText, modelOf, textChunks, usageOf } from './reply-helpers.js';
import type { SseEvent, WireFormat } from './types.js';

/**
 * OpenAI Chat Completions, streaming (POST /v1/chat/completions with `stream: true`) — what
 * @ai-sdk/openai-compatible speaks, and what Ollama, vLLM and LM Studio serve. `data:`-only
 * chunks; tool calls arrive by `index`, the name first and the arguments in pieces; usage comes
 * in a last chunk with empty `choices` only when `stream_options.include_usage` was asked; the
 * stream ends with `data: [DONE]`.
 */
export const openaiChatCompletions: WireFormat = {
  path: '/v1/chat/completions',
  isAuthorized: openaiIsAuthorized,
  errorBody: openaiErrorBody,
  terminator: 'data: [DONE]\n\n',

  events(reply, request, ids) {
    const id = ids.next('chatcmpl-fake');
    const created = Math.floor(Date.now() / 1000);
    const model = modelOf(request);
    const includeUsage = request.body?.stream_options?.include_usage === true;
    const events: SseEvent[] = [];
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      events.push({
        data: JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          system_fingerprint: 'fp_fake',
          choices,
          ...(includeUsage ? { usage: null } : {}),
          ...extra,
        }),
      });
    const delta = (value: Record<string, unknown>, finish_reason: string | null = null) =>
      chunk([{ index: 0, delta: value, logprobs: null, finish_reason }]);

    delta({ role: 'assistant', content: '', refusal: null });
    for (const content of textChunks(reply)) delta({ content });
    const calls = reply.toolCalls ?? [];
    calls.forEach((call, index) => {
      delta({ tool_calls: [{ index, id: call.id ?? ids.next('call_fake_'), type: 'function', function: { name: call.name, arguments: '' } }] });
      for (const piece of argumentDeltas(argumentsText(call))) delta({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    delta({}, reply.finish === 'length' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop');
    if (includeUsage) {
      const usage = usageOf(reply, request);
      chunk([], {
        usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens },
      });
    }
    return events;
  },
};
