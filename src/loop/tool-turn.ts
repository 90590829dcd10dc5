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
  | { kind: 'run'; call: ToolCall; tool: Tool; input: unknown; decision: ToolHistoryEntry['decision']; note?: string };

/**
 * Runs the tool calls of one model turn. Calls are authorised in call order, one ask at a time:
 * an answer can change what follows (an "always" covers later calls, a rejection cancels the
 * remaining asks), and one prompt at a time is what a terminal can show. Read-only calls that are
 * allowed run concurrently with each other; a call that can change things waits for the ones before
 * it. Results go back to the model in call order.
 */
export async function toolTurn(ctx: RunContext, calls: readonly ToolCall[]): Promise<void> {
  const { state } = ctx;
  ctx.enter(STATES.executingTools);
  const running: Promise<void>[] = [];
  let rejected: string | undefined;
  const interrupted = ctx.options.resumeFrom?.interruptedCallIds;
  for (const call of calls) {
    if (state.turnResults[call.id]) continue; // recorded before a restart: never run again
    // A resumable tool (Task) is run again with the same id: it re-attaches to the work it started.
    if (interrupted?.includes(call.id) && !ctx.registry.get(call.name)?.resumable) {
      record(ctx, call, call.input, { content: modelTexts.interruptedByRestart(call.name), isError: true }, { behavior: 'allow', reason: 'was running when the process stopped', source: 'default' }, 0);
      continue;
    }
    ctx.emit('tool.requested', { toolCallId: call.id, toolName: call.name, input: call.input });
    // Awaited only when the gate or a person answers later (a plain decision costs no tick).
    const maybe = prepare(ctx, call, rejected);
    const prepared = isThenable(maybe) ? await maybe : maybe;
    if (prepared.kind === 'result') {
      if (prepared.rejectedByUser && rejected === undefined) rejected = call.name;
      record(ctx, call, call.input, { content: prepared.content, isError: true }, prepared.decision, 0);
      const saved = ctx.checkpoint();
      if (saved) await saved;
      continue;
    }
    const paused = ctx.boundary();
    if (paused) await paused;
    if (prepared.tool.readOnly) {
      const pending = runOne(ctx, prepared);
      // Awaited below; if the turn unwinds first (a suspension), its rejection is not unhandled.
      pending.catch(() => {});
      running.push(pending);
    } else {
      if (running.length > 0) await Promise.all(running.splice(0));
      await runOne(ctx, prepared);
    }
  }
  if (running.length > 0) await Promise.all(running);
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

async function runOne(ctx: RunContext, prepared: Extract<Prepared, { kind: 'run' }>): Promise<void> {
  const { call, tool, input } = prepared;
  ctx.state.inFlight.push(call.id);
  const hooks = ctx.options.hooks;
  // A read-only call changes nothing: after a crash it is simply run again, so it needs no intent
  // (and no commit before it: a Read step costs no fsync of its own).
  if (hooks?.toolIntent && !tool.readOnly) await hooks.toolIntent({ toolCallId: call.id, toolName: call.name, input }, ctx.state);
  ctx.emit('tool.started', { toolCallId: call.id, toolName: call.name, input });
  const started = performance.now();
  // executeTool, inlined: one async frame per call instead of two.
  let result: TurnResult;
  // The whole output, when the tool cut what the model gets: for the event only (people read it).
  let fullContent: string | undefined;
  try {
    const returned = await tool.execute(input, toolContext(ctx, call.id, tool, input));
    if (typeof returned === 'object') fullContent = returned.fullContent;
    result = toolResult(returned);
  } catch (error) {
    result = toolFailure(ctx, tool, error);
  }
  // A tool cut short by a suspension (its ask was released, not answered) has no real result: the
  // resumed run executes it again and its ask finds the stored answer.
  if (ctx.stopReason?.kind === 'suspend') ctx.throwIfStopped();
  const content = prepared.note ? `${prepared.note}\n${result.content}` : result.content;
  removeInFlight(ctx.state.inFlight, call.id);
  // The result object is the loop's own (made by toolResult/toolFailure): kept as is unless a note is added.
  record(ctx, call, input, prepared.note ? { ...result, content } : result, prepared.decision, performance.now() - started, fullContent);
  if (ctx.gate.afterCall) {
    const gateCall = toGateCall(ctx, call, tool, input);
    if (gateCall) await ctx.gate.afterCall(gateCall, { content, isError: result.isError }, ctx.gateContext);
  }
  const saved = ctx.checkpoint();
  if (saved) await saved;
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
  emitDecision(ctx, call, auth.decision);
  const decision = { behavior: auth.decision.behavior, reason: auth.decision.reason, source: auth.decision.source, rule: auth.decision.rule, answeredBy: auth.answeredBy };
  if (!auth.allowed) return { kind: 'result', call, content: auth.modelText, decision, rejectedByUser: auth.rejectedByUser };
  return { kind: 'run', call, tool, input: auth.input, decision, note: auth.note };
}

function emitDecision(ctx: RunContext, call: ToolCall, decision: PermissionDecision): void {
  ctx.emit('permission.decided', decisionData(call, decision.behavior, decision));
}

