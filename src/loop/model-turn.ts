import { ModelError } from '../errors/index.js';
import type { ModelStreamPart, TokenUsage, ToolCall } from '../model/types.js';
import { STATES } from './lifecycle.js';
import type { RunContext } from './run-context.js';
import { toolSpecs } from './tool-specs.js';

export interface AssistantTurn {
  text: string;
  toolCalls: ToolCall[];
}

/**
 * One model call: streams text deltas out as events and returns the whole assistant turn. The
 * message is appended only after the stream finished, so a cut stream never leaves half a message.
 *
 * Returns the turn itself when nothing had to be waited for (no context preparation, no pause, a
 * model whose parts are all there), else a promise of it.
 */
export function modelTurn(ctx: RunContext): AssistantTurn | Promise<AssistantTurn> {
  ctx.enter(STATES.preparingContext);
  if (ctx.options.prepareMessages) return prepareThenCall(ctx, ctx.options.prepareMessages);
  return callModel(ctx);
}

async function prepareThenCall(ctx: RunContext, prepareMessages: NonNullable<RunContext['options']['prepareMessages']>): Promise<AssistantTurn> {
  const { state } = ctx;
  const prepared = await prepareMessages(state.messages, ctx.signal);
  if (prepared) {
    state.messages = prepared.messages;
    state.compactions = (state.compactions ?? 0) + 1;
    if (prepared.event) ctx.emit('context.compacted', prepared.event);
  }
  return callModel(ctx);
}

function callModel(ctx: RunContext): AssistantTurn | Promise<AssistantTurn> {
  const paused = ctx.boundary();
  if (paused) return paused.then(() => streamModel(ctx));
  return streamModel(ctx);
}

function streamModel(ctx: RunContext): AssistantTurn | Promise<AssistantTurn> {
  const { state } = ctx;
  ctx.enter(STATES.callingModel);
  state.stats.modelCalls++;
  const turn = new TurnParts();
  const stream = ctx.model.stream({
    system: ctx.options.system,
    messages: state.messages,
    tools: toolSpecs(ctx.registry),
    signal: ctx.signal,
  });
  // A model whose parts are all there already (the scripted model) also offers them synchronously:
  // the same parts in the same order, without a promise per part.
  if (typeof (stream as Partial<Iterable<ModelStreamPart>>)[Symbol.iterator] === 'function') {
    for (const part of stream as unknown as Iterable<ModelStreamPart>) turn.add(ctx, part);
    return complete(ctx, turn);
  }
  return readStream(ctx, turn, stream);
}

async function readStream(ctx: RunContext, turn: TurnParts, stream: AsyncIterable<ModelStreamPart>): Promise<AssistantTurn> {
  for await (const part of stream) turn.add(ctx, part);
  return complete(ctx, turn);
}

function complete(ctx: RunContext, turn: TurnParts): AssistantTurn {
  const { state } = ctx;
  ctx.throwIfStopped();
  if (!turn.finished) throw new ModelError('The model stream ended without finishing; the partial reply was discarded.', { code: 'model_stream_incomplete' });
  ctx.enter(STATES.processingResponse);
  const { text, toolCalls } = turn;
  state.messages.push(toolCalls.length > 0 ? { role: 'assistant', content: text, toolCalls } : { role: 'assistant', content: text });
  const calls: { id: string; name: string; input: unknown }[] = [];
  for (const c of toolCalls) calls.push({ id: c.id, name: c.name, input: c.input });
  ctx.emit('message.completed', { role: 'assistant', text, toolCalls: calls, usage: turn.usage });
  return turn;
}

/** The assistant turn as its parts arrive. */
class TurnParts implements AssistantTurn {
  text = '';
  readonly toolCalls: ToolCall[] = [];
  finished = false;
  usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };

  add(ctx: RunContext, part: ModelStreamPart): void {
    if (part.type === 'text-delta') {
      if (part.text.length === 0) return;
      this.text += part.text;
      ctx.emit('message.delta', { text: part.text });
    } else if (part.type === 'tool-call') {
      this.toolCalls.push(part.call);
    } else {
      this.finished = true;
      this.usage = part.usage;
      ctx.state.usage.inputTokens += part.usage.inputTokens;
      ctx.state.usage.outputTokens += part.usage.outputTokens;
    }
  }
}
