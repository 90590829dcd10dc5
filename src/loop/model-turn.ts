import { ModelError } from '../errors/index.js';
import type { ModelStreamPart, TokenUsage, ToolCall } from '../model/types.js';
import { STATES } from './lifecycle.js';
import type { RunContext } from './run-context.js';

export interface AssistantTurn {
  text: string;
  toolCalls: ToolCall[];
  /** The clock read of its message.completed (see RunContext.stamp). */
  completedAt?: string;
}

/**
 * One model call: streams text deltas out as events and returns the whole assistant turn. The
 * message is appended only after the stream finished, so a cut stream never leaves half a message.
 *
 * Returns the turn itself when nothing had to be waited for (no context preparation, no pause, a
 * model whose parts are all there); a {@link PendingTurn} when the model's stream is to be read (the
 * caller reads it with `for await` in its own frame: see `PendingTurn`); else a promise of the turn.
 * `at`: the clock read of the event emitted just before (`RunContext.stamp()`), for the state changes.
 */
export function modelTurn(ctx: RunContext, at?: string): AssistantTurn | PendingTurn | Promise<AssistantTurn> {
  ctx.enter(STATES.preparingContext, at);
  if (ctx.options.prepareMessages) return prepareThenCall(ctx, ctx.options.prepareMessages);
  return callModel(ctx, at);
}

async function prepareThenCall(ctx: RunContext, prepareMessages: NonNullable<RunContext['options']['prepareMessages']>): Promise<AssistantTurn> {
  const { state } = ctx;
  const prepared = await prepareMessages(state.messages, ctx.signal);
  if (prepared) {
    state.messages = prepared.messages;
    state.compactions = (state.compactions ?? 0) + 1;
    if (prepared.event) ctx.emit('context.compacted', prepared.event);
  }
  const turn = callModel(ctx);
  return turn instanceof PendingTurn ? readTurn(ctx, turn) : turn;
}

function callModel(ctx: RunContext, at?: string): AssistantTurn | PendingTurn | Promise<AssistantTurn> {
  const paused = ctx.boundary();
  if (paused) return paused.then(() => {
    const turn = streamModel(ctx);
    return turn instanceof PendingTurn ? readTurn(ctx, turn) : turn;
  });
  return streamModel(ctx, at);
}

function streamModel(ctx: RunContext, at?: string): AssistantTurn | PendingTurn {
  const { state } = ctx;
  ctx.enter(STATES.callingModel, at);
  state.stats.modelCalls++;
  const stream = ctx.model.stream({
    system: ctx.options.system,
    messages: state.messages,
    tools: ctx.toolSpecs(),
    signal: ctx.signal,
  });
  // A model whose parts are all there already (the scripted model) also offers them synchronously:
  // the same parts in the same order, without a promise per part.
  if (typeof (stream as Partial<Iterable<ModelStreamPart>>)[Symbol.iterator] === 'function') {
    const turn = new TurnParts();
    for (const part of stream as unknown as Iterable<ModelStreamPart>) turn.add(ctx, part);
    return turn.complete(ctx);
  }
  return new PendingTurn(stream);
}

/** Reads a pending turn's stream to its end (where the caller cannot read it in its own frame). */
async function readTurn(ctx: RunContext, turn: PendingTurn): Promise<AssistantTurn> {
  for await (const part of turn.stream) turn.add(ctx, part);
  return turn.complete(ctx);
}

/** The assistant turn as its parts arrive. */
class TurnParts implements AssistantTurn {
  text = '';
  readonly toolCalls: ToolCall[] = [];
  finished = false;
  usage: TokenUsage | undefined;
  completedAt: string | undefined;

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

  /** The stream has ended: the turn goes into the conversation, and out as `message.completed`. */
  complete(ctx: RunContext): AssistantTurn {
    const { state } = ctx;
    ctx.throwIfStopped();
    if (!this.finished) throw new ModelError('The model stream ended without finishing; the partial reply was discarded.', { code: 'model_stream_incomplete' });
    // One clock read for the state change and the event (no caller code runs between them).
    const at = (this.completedAt = ctx.stamp());
    ctx.enter(STATES.processingResponse, at);
    const { text, toolCalls } = this;
    state.messages.push(toolCalls.length > 0 ? { role: 'assistant', content: text, toolCalls } : { role: 'assistant', content: text });
    const calls: { id: string; name: string; input: unknown }[] = [];
    for (const c of toolCalls) calls.push({ id: c.id, name: c.name, input: c.input });
    ctx.emit('message.completed', { role: 'assistant', text, toolCalls: calls, usage: this.usage }, at);
    return this;
  }
}

/**
 * A turn whose stream is still to be read, as `modelTurn` returns it: the loop reads it in its own
 * async frame (`for await (const part of turn.stream) turn.add(ctx, part)`, then
 * `turn.complete(ctx)`) rather than awaiting an async function that reads it, which was one more
 * promise and one more tick on every step.
 */
export class PendingTurn extends TurnParts {
  constructor(readonly stream: AsyncIterable<ModelStreamPart>) {
    super();
  }
}
