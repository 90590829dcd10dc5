import { checkToolImages } from '../model/tool-image.js';
import { withFields } from '../interaction/with-fields.js';
import type { Tool, ToolContext } from '../tool/types.js';
import type { TurnResult } from './loop-state.js';
import { modelTexts } from './model-texts.js';
import type { RunContext } from './run-context.js';

/** Runs a tool with the run's signal; whatever it throws becomes an error result, never a crash. */
export async function executeTool(ctx: RunContext, tool: Tool, toolCallId: string, input: unknown): Promise<TurnResult> {
  try {
    return toolResult(await tool.execute(input, toolContext(ctx, toolCallId, tool, input)));
  } catch (error) {
    return toolFailure(ctx, tool, error);
  }
}

/** What a tool gets besides its input. */
export function toolContext(ctx: RunContext, toolCallId: string, tool?: Tool, input?: unknown): ToolContext {
  const { gateContext } = ctx;
  const interact = interactFor(ctx, toolCallId, tool, input);
  const agent = ctx.options.agent;
  // Two plain literals rather than one with a conditional spread: a spread makes V8 build the
  // object by copying properties at run time instead of from the literal's template, on every call.
  if (agent) {
    return { runId: ctx.runId, sessionId: gateContext.sessionId, userId: gateContext.userId, toolCallId, cwd: gateContext.cwd, signal: ctx.signal, runState: ctx.runState, interact, agent: agent.type, relayEvent: ctx.relayEvent, addUsage: ctx.addUsage };
  }
  return { runId: ctx.runId, sessionId: gateContext.sessionId, userId: gateContext.userId, toolCallId, cwd: gateContext.cwd, signal: ctx.signal, runState: ctx.runState, interact, relayEvent: ctx.relayEvent, addUsage: ctx.addUsage };
}

/** A tool's return value as a result. */
export function toolResult(result: Awaited<ReturnType<Tool['execute']>>): TurnResult {
  if (typeof result === 'string') return { content: result, isError: false };
  // Images go to the model only with a successful result (providers take an error as text), and
  // only those a provider takes: one it refuses would fail every later model call of the run.
  if (result.images?.length && !result.isError) {
    const checked = checkToolImages(result.content, result.images);
    return checked.images.length ? { content: checked.content, isError: false, images: checked.images } : { content: checked.content, isError: false };
  }
  return { content: result.content, isError: result.isError ?? false };
}

/** A tool that threw: an error result the model can read (unless the run was stopped, which unwinds). */
export function toolFailure(ctx: RunContext, tool: Tool, error: unknown): { content: string; isError: boolean } {
  ctx.throwIfStopped();
  return { content: modelTexts.toolThrew(tool.name, error instanceof Error ? error.message : String(error)), isError: true };
}

/**
 * The tool's `ctx.interact`. Ids are derived from the call, so a resumed run finds the answer given
 * before the restart. Made by a function (an unnamed closure: no per-call name to set under tsx).
 */
function interactFor(ctx: RunContext, toolCallId: string, tool?: Tool, input?: unknown): ToolContext['interact'] {
  let asked = 0;
  return async (draft, options) => {
    const outcome = await ctx.interact(withFields(draft, { id: draft.id ?? `${ctx.runId}:${toolCallId}:interact:${asked++}` }) as typeof draft, options?.timeoutMs);
    if (tool && outcome.status === 'answered') await auditAnswers(ctx, toolCallId, tool, input, draft.kind, outcome.response);
    return outcome;
  };
}

/** What a person answered to a tool's question (AskUserQuestion, input, select), for the audit trail. */
async function auditAnswers(ctx: RunContext, toolCallId: string, tool: Tool, input: unknown, kind: string, response: { answers?: Record<string, string | string[]>; text?: string; selected?: string[]; userId?: string; channel?: string }): Promise<void> {
  const answers = kind === 'questions' ? response.answers
    : kind === 'input' && response.text !== undefined ? { text: response.text }
    : kind === 'select' && response.selected !== undefined ? { selected: response.selected }
    : undefined;
  const info = ctx.registry.gateInfoOf(tool.name);
  if (!answers || !info || !ctx.gate.recordAnswer) return;
  const call = { toolCallId, toolName: tool.name, input, tool: info };
  // Recorded as an approval with nothing to remember: the gate keeps no memory or rule from it.
  await ctx.gate.recordAnswer({ call, decision: { behavior: 'allow', reason: 'the tool asked the person', source: 'user' }, approved: true, userId: response.userId, channel: response.channel, answers }, ctx.gateContext);
}
