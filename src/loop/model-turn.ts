import { ModelError } from '../errors/index.js';
import type { ToolCall } from '../model/types.js';
import type { RunContext } from './run-context.js';
import { toolSpecs } from './tool-specs.js';

export interface AssistantTurn {
  text: string;
  toolCalls: ToolCall[];
}

/**
 * One model call: streams text deltas out as events and returns the whole assistant turn. The
 * message is appended only after the stream finished, so a cut stream never leaves half a message.
 */
export async function modelTurn(ctx: RunContext): Promise<AssistantTurn> {
  const { state } = ctx;
  ctx.enter({ state: 'executing', phase: 'preparing_context' });
  if (ctx.options.prepareMessages) {
    const prepared = await ctx.options.prepareMessages(state.messages, ctx.signal);
    if (prepared) {
      state.messages = prepared.messages;
      state.compactions = (state.compactions ?? 0) + 1;
      if (prepared.event) ctx.emit('context.compacted', prepared.event);
    }
  }
  await ctx.boundary();
  ctx.enter({ state: 'executing', phase: 'calling_model' });
  state.stats.modelCalls++;
  let text = '';
  const toolCalls: ToolCall[] = [];
  let finished = false;
  let usage = { inputTokens: 0, outputTokens: 0 };
  const stream = ctx.model.stream({
    system: ctx.options.system,
    messages: state.messages,
    tools: toolSpecs(ctx.registry),
    signal: ctx.signal,
  });
  for await (const part of stream) {
    if (part.type === 'text-delta') {
      if (part.text.length === 0) continue;
      text += part.text;
      ctx.emit('message.delta', { text: part.text });
    } else if (part.type === 'tool-call') {
      toolCalls.push(part.call);
    } else {
      finished = true;
      usage = part.usage;
      state.usage.inputTokens += part.usage.inputTokens;
      state.usage.outputTokens += part.usage.outputTokens;
    }
  }
  ctx.throwIfStopped();
  if (!finished) throw new ModelError('The model stream ended without finishing; the partial reply was discarded.', { code: 'model_stream_incomplete' });
  ctx.enter({ state: 'executing', phase: 'processing_response' });
  state.messages.push(toolCalls.length > 0 ? { role: 'assistant', content: text, toolCalls } : { role: 'assistant', content: text });
  ctx.emit('message.completed', {
    role: 'assistant',
    text,
    toolCalls: toolCalls.map((c) => ({ id: c.id, name: c.name, input: c.input })),
    usage,
  });
  return { text, toolCalls };
}
