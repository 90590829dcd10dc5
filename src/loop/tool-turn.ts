import type { ToolCall } from '../model/types.js';
import type { GateCall, PermissionDecision } from '../permission/types.js';
import type { Tool } from '../tool/types.js';
import { authorize, decisionData, isThenable, type Authorization } from './authorize.js';
import { toolContext, toolFailure, toolResult } from './execute-tool.js';
import { STATES } from './lifecycle.js';
import { modelTexts } from './model-texts.js';
import type { TurnResult } from './loop-state.js';
import type { ToolHistoryEntry } from './outcome.js';
import type { RunContext } from './run-context.js';
import { formatZodError } from '../errors/format-zod-error.js';

type Prepared =
  | { kind: 'result'; call: ToolCall; content: string; decision: ToolHistoryEntry['decision']; rejectedByUser?: boolean }
  | { kind: 'run'; call: ToolCall; tool: Tool; input: unknown; decision: ToolHistoryEntry['decision']; note?: string; decidedAt: string | undefined };

/**
 * Runs the tool calls of one model turn. Calls are authorised in call order, one ask at a time:
 * an answer can change what follows (an "always" covers later calls, a rejection cancels the
 * remaining asks), and one prompt at a time is what a terminal can show. Read-only calls that are
 * allowed run concurrently with each other; a call that can change things waits for the ones before
 * it. Results go back to the model in call order.
 */
export async function toolTurn(ctx: RunContext, calls: readonly ToolCall[], turnAt?: string): Promise<void> {
  const { state } = ctx;
  // One clock read for the state change and the first call's tool.requested (nothing runs between),
  // or the model turn's (`turnAt`: its message.completed, when nothing ran since).
  let at = turnAt ?? ctx.stamp();
  ctx.enter(STATES.executingTools, at);
  let running: Promise<void>[] | undefined;
  let rejected: string | undefined;
  const interrupted = ctx.options.resumeFrom?.interruptedCallIds;
  // Results are looked up by call id only once there can be any: a turn starts with none unless it
  // was checkpointed mid-turn (a keyed miss on the empty results object showed in profiles).
  let mayHaveResults = ctx.options.resumeFrom !== undefined;
  for (const call of calls) {
    if (mayHaveResults && state.turnResults[call.id]) continue; // recorded before a restart (or a repeated id): never run again
    mayHaveResults = true;
    // A resumable tool (Task) is run again with the same id: it re-attaches to the work it started.
    if (interrupted?.includes(call.id) && !ctx.registry.get(call.name)?.resumable) {
      record(ctx, call, call.input, { content: modelTexts.interruptedByRestart(call.name), isError: true }, { behavior: 'allow', reason: 'was running when the process stopped', source: 'default' }, 0);
      continue;
    }
    ctx.emit('tool.requested', { toolCallId: call.id, toolName: call.name, input: call.input }, at);
    at = undefined;
    // Awaited only when the gate or a person answers later (a plain decision costs no tick).
    const maybe = prepare(ctx, call, rejected);
    // The clock read of permission.decided, for tool.started while nothing runs between them.
    let decidedAt: string | undefined;
    let prepared: Prepared;
    if (isThenable(maybe)) prepared = await maybe;
    else {
      prepared = maybe;
      if (prepared.kind === 'run') decidedAt = prepared.decidedAt;
    }
    if (prepared.kind === 'result') {
      if (prepared.rejectedByUser && rejected === undefined) rejected = call.name;
      record(ctx, call, call.input, { content: prepared.content, isError: true }, prepared.decision, 0);
      const saved = ctx.checkpoint();
      if (saved) await saved;
      continue;
    }
    const paused = ctx.boundary();
    if (paused) {
      await paused;
      decidedAt = undefined;
    }
    if (prepared.tool.readOnly) {
      const pending = runOne(ctx, prepared, decidedAt);
      // Awaited below; if the turn unwinds first (a suspension), its rejection is not unhandled.
      pending.catch(() => {});
      (running ??= []).push(pending);
      continue;
    }
    if (running && running.length > 0) {
      await Promise.all(running.splice(0));
      decidedAt = undefined;
    }
    // runOne, inlined for a call that runs alone: no promise of its own and one tick less per call.
    const intent = beforeRun(ctx, prepared, decidedAt);
    if (intent) await intent;
    const started = performance.now();
    let result: TurnResult;
    let fullContent: string | undefined;
    try {
      const returned = await prepared.tool.execute(prepared.input, toolContext(ctx, call.id, prepared.tool, prepared.input));
      if (typeof returned === 'object') fullContent = returned.fullContent;
      result = toolResult(returned);
    } catch (error) {
      result = toolFailure(ctx, prepared.tool, error);
    }
    const after = afterRun(ctx, prepared, started, result, fullContent);
    if (after) await after;
  }
  if (running && running.length > 0) await Promise.all(running);
  // Results go back in call order, whatever order they finished in.
  for (const call of calls) {
    const result = state.turnResults[call.id]!;
    state.messages.push(
      result.isError
        ? { role: 'tool', toolCallId: call.id, toolName: call.name, content: result.content, isError: true }
        : result.images
          ? { role: 'tool', toolCallId: call.id, toolName: call.name, content: result.content, images: result.images }
          : { role: 'tool', toolCallId: call.id, toolName: call.name, content: result.content },
    );
  }
  state.turnResults = {};
}

/** One call, run concurrently with the turn's other read-only calls. */
async function runOne(ctx: RunContext, prepared: Extract<Prepared, { kind: 'run' }>, decidedAt: string | undefined): Promise<void> {
  const intent = beforeRun(ctx, prepared, decidedAt);
  if (intent) await intent;
  const started = performance.now();
  let result: TurnResult;
  let fullContent: string | undefined;
  try {
    const returned = await prepared.tool.execute(prepared.input, toolContext(ctx, prepared.call.id, prepared.tool, prepared.input));
    if (typeof returned === 'object') fullContent = returned.fullContent;
    result = toolResult(returned);
  } catch (error) {
    result = toolFailure(ctx, prepared.tool, error);
  }
  const after = afterRun(ctx, prepared, started, result, fullContent);
  if (after) await after;
}

/**
 * Before a call's side effect: it is in flight, its intent is recorded (a promise when the hook
 * returns one), then tool.started. The caller then executes the tool and calls `afterRun`.
 * `decidedAt`: the clock read of its permission.decided when nothing ran since (no intent hook runs
 * either: tool.started then reads the clock itself).
 */
function beforeRun(ctx: RunContext, prepared: Extract<Prepared, { kind: 'run' }>, decidedAt: string | undefined): Promise<void> | void {
  const { call, tool, input } = prepared;
  ctx.state.inFlight.push(call.id);
  const hooks = ctx.options.hooks;
  // A read-only call changes nothing: after a crash it is simply run again, so it needs no intent
  // (and no commit before it: a Read step costs no fsync of its own).
  if (hooks?.toolIntent && !tool.readOnly) {
    const intent = hooks.toolIntent({ toolCallId: call.id, toolName: call.name, input }, ctx.state);
    if (isThenable(intent)) return Promise.resolve(intent).then(() => emitStarted(ctx, prepared));
    decidedAt = undefined;
  }
  emitStarted(ctx, prepared, decidedAt);
}

function emitStarted(ctx: RunContext, { call, input }: Extract<Prepared, { kind: 'run' }>, at?: string): void {
  ctx.emit('tool.started', { toolCallId: call.id, toolName: call.name, input }, at);
}

/**
 * After the tool's result (or its error result): records it, tells the gate, checkpoints. A promise
 * only when the gate or the checkpoint hook returns one. `fullContent`: the whole output when the
 * tool cut what the model gets (for the event only: people read it).
 */
function afterRun(ctx: RunContext, prepared: Extract<Prepared, { kind: 'run' }>, started: number, result: TurnResult, fullContent: string | undefined): Promise<void> | void {
  const { call, tool, input } = prepared;
  // A tool cut short by a suspension (its ask was released, not answered) has no real result: the
  // resumed run executes it again and its ask finds the stored answer.
  if (ctx.stopReason?.kind === 'suspend') ctx.throwIfStopped();
  const content = prepared.note ? `${prepared.note}\n${result.content}` : result.content;
  removeInFlight(ctx.state.inFlight, call.id);
  // The result object is the loop's own (made by toolResult/toolFailure): kept as is unless a note is added.
  record(ctx, call, input, prepared.note ? { ...result, content } : result, prepared.decision, performance.now() - started, fullContent);
  if (ctx.gate.afterCall) {
    const gateCall = toGateCall(ctx, call, tool, input);
    if (gateCall) {
      const told = ctx.gate.afterCall(gateCall, { content, isError: result.isError }, ctx.gateContext);
      if (isThenable(told)) return Promise.resolve(told).then(() => ctx.checkpoint());
    }
  }
  return ctx.checkpoint();
}

/** Drops a finished call from the in-flight list, in place (usually the last one). */
function removeInFlight(inFlight: string[], id: string): void {
  if (inFlight[inFlight.length - 1] === id) {
    inFlight.pop();
    return;
  }
  const i = inFlight.indexOf(id);
  if (i >= 0) inFlight.splice(i, 1);
}

function record(
  ctx: RunContext,
  call: ToolCall,
  input: unknown,
  result: TurnResult,
  decision: ToolHistoryEntry['decision'],
  durationMs: number,
  fullContent?: string,
): void {
  const { state } = ctx;
  state.turnResults[call.id] = result;
  state.stats.toolCalls++;
  // The history and the event get the text only: it names the images, whose bytes stay in the conversation.
  state.toolHistory.push({ toolCallId: call.id, name: call.name, input, decision, result: result.images ? { content: result.content, isError: result.isError } : result, durationMs });
  // No conditional spread (it builds the object property by property at run time, on every call).
  ctx.emit(
    'tool.completed',
    fullContent === undefined
      ? { toolCallId: call.id, toolName: call.name, isError: result.isError, content: result.content, durationMs }
      : { toolCallId: call.id, toolName: call.name, isError: result.isError, content: result.content, durationMs, fullContent },
  );
}

export function toGateCall(ctx: RunContext, call: ToolCall, tool: Tool, input: unknown): GateCall | undefined {
  const info = ctx.registry.gateInfoOf(tool.name);
  return info ? { toolCallId: call.id, toolName: call.name, input, tool: info } : undefined;
}

/**
 * Validates the input and passes the gate (asking a person when it says ask). A plain value when
 * nothing had to be waited for, else a promise.
 */
function prepare(ctx: RunContext, call: ToolCall, rejected: string | undefined): Prepared | Promise<Prepared> {
  const tool = ctx.registry.get(call.name);
  if (!tool) return { kind: 'result', call, content: modelTexts.unknownTool(call.name, ctx.registry.names()), decision: noDecision() };
  if (call.inputError) return { kind: 'result', call, content: modelTexts.unparsableInput(call.name, call.inputError), decision: noDecision() };
  const parsed = tool.inputSchema.safeParse(call.input);
  if (!parsed.success) return { kind: 'result', call, content: modelTexts.invalidInput(call.name, formatZodError(parsed.error)), decision: noDecision() };
  const auth = authorize(ctx, call, tool, parsed.data, rejected);
  return isThenable(auth) ? auth.then((a) => authorized(ctx, call, tool, a)) : authorized(ctx, call, tool, auth);
}

function noDecision(): ToolHistoryEntry['decision'] {
  return { behavior: 'deny', reason: 'not run', source: 'tool' };
}

function authorized(ctx: RunContext, call: ToolCall, tool: Tool, auth: Authorization): Prepared {
  const decidedAt = ctx.stamp();
  emitDecision(ctx, call, auth.decision, decidedAt);
  const decision = { behavior: auth.decision.behavior, reason: auth.decision.reason, source: auth.decision.source, rule: auth.decision.rule, answeredBy: auth.answeredBy };
  if (!auth.allowed) return { kind: 'result', call, content: auth.modelText, decision, rejectedByUser: auth.rejectedByUser };
  return { kind: 'run', call, tool, input: auth.input, decision, note: auth.note, decidedAt };
}

function emitDecision(ctx: RunContext, call: ToolCall, decision: PermissionDecision, at?: string): void {
  ctx.emit('permission.decided', decisionData(call, decision.behavior, decision), at);
}

