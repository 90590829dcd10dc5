import { openaiErrorBody, openaiIsAuthorized } from './openai-errors.js';
import { argumentDeltas, argumentsText, modelOf, textChunks, usageOf } from './reply-helpers.js';
import type { SseEvent, WireFormat } from './types.js';

/**
 * OpenAI Responses API, streaming (POST /v1/responses with `stream: true`) — what `openai(name)`
 * speaks in @ai-sdk/openai 3. Every event carries `sequence_number`; items are announced with
 * `response.output_item.added`, filled by deltas and closed with `response.output_item.done`,
 * and the stream ends with `response.completed` (or `response.incomplete`) holding the usage.
 */
export const openaiResponses: WireFormat = {
  path: '/v1/responses',
  isAuthorized: openaiIsAuthorized,
  errorBody: openaiErrorBody,

  events(reply, request, ids) {
    const usage = usageOf(reply, request);
    const events: SseEvent[] = [];
    let sequence = 0;
    const send = (type: string, data: Record<string, unknown>) =>
      events.push({ event: type, data: JSON.stringify({ type, sequence_number: sequence++, ...data }) });

    const response = {
      id: ids.next('resp_fake_'),
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model: modelOf(request),
      parallel_tool_calls: true,
      tool_choice: request.body?.tool_choice ?? 'auto',
      tools: request.body?.tools ?? [],
    };
    send('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
    send('response.in_progress', { response: { ...response, status: 'in_progress', output: [], usage: null } });

    const output: unknown[] = [];
    const chunks = textChunks(reply);
    if (chunks.length > 0) {
      const output_index = output.length;
      const item_id = ids.next('msg_fake_');
      const text = chunks.join('');
      const part = (value: string) => ({ type: 'output_text', annotations: [], logprobs: [], text: value });
      send('response.output_item.added', { output_index, item: { id: item_id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } });
      send('response.content_part.added', { item_id, output_index, content_index: 0, part: part('') });
      for (const delta of chunks) send('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] });
      send('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] });
      send('response.content_part.done', { item_id, output_index, content_index: 0, part: part(text) });
      const item = { id: item_id, type: 'message', status: 'completed', content: [part(text)], role: 'assistant' };
      send('response.output_item.done', { output_index, item });
      output.push(item);
    }
    for (const call of reply.toolCalls ?? []) {
      const output_index = output.length;
      const item_id = ids.next('fc_fake_');
      const call_id = call.id ?? ids.next('call_fake_');
      const args = argumentsText(call);
      send('response.output_item.added', {
        output_index,
        item: { id: item_id, type: 'function_call', status: 'in_progress', arguments: '', call_id, name: call.name },
      });
      for (const delta of argumentDeltas(args)) send('response.function_call_arguments.delta', { item_id, output_index, delta });
      send('response.function_call_arguments.done', { item_id, output_index, arguments: args });
      const item = { id: item_id, type: 'function_call', status: 'completed', arguments: args, call_id, name: call.name };
      send('response.output_item.done', { output_index, item });
      output.push(item);
    }

    const incomplete = reply.finish === 'length';
    send(incomplete ? 'response.incomplete' : 'response.completed', {
      response: {
        ...response,
        status: incomplete ? 'incomplete' : 'completed',
        incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
        output,
        usage: {
          input_tokens: usage.inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: usage.outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.inputTokens + usage.outputTokens,
        },
      },
    });
    return events;
  },
};
