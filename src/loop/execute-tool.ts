import type { Tool, ToolContext } from '../tool/types.js';
import { modelTexts } from './model-texts.js';
import type { RunContext } from './run-context.js';

/** Runs a tool with the run's signal; whatever it throws becomes an error result, never a crash. */
export async function executeTool(ctx: RunContext, tool: Tool, toolCallId: string, input: unknown): Promise<{ content: string; isError: boolean }> {
  const toolContext: ToolContext = {
    runId: ctx.runId,
    sessionId: ctx.gateContext.sessionId,
    userId: ctx.gateContext.userId,
    toolCallId,
    cwd: ctx.gateContext.cwd,
    signal: ctx.signal,
    runState: ctx.runState,
    interact: interactFor(ctx, toolCallId),
  };
  try {
    const result = await tool.execute(input, toolContext);
    if (typeof result === 'string') return { content: result, isError: false };
    return { content: result.content, isError: result.isError ?? false };
  } catch (error) {
    ctx.throwIfStopped();
    return { content: modelTexts.toolThrew(tool.name, error instanceof Error ? error.message : String(error)), isError: true };
  }
}

/**
 * The tool's `ctx.interact`. Ids are derived from the call, so a resumed run finds the answer given
 * before the restart. Made by a function (an unnamed closure: no per-call name to set under tsx).
 */
function interactFor(ctx: RunContext, toolCallId: string): ToolContext['interact'] {
  let asked = 0;
  return (draft, options) => ctx.interact({ ...draft, id: draft.id ?? `${ctx.runId}:${toolCallId}:interact:${asked++}` } as typeof draft, options?.timeoutMs);
}
