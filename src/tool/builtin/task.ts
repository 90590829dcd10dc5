import { z } from 'zod';
import { TextPool } from '../../text-pool/index.js';
import { defineTool, type Tool, type ToolContext, type ToolResult } from '../types.js';

/** Claude Code's Task input: the model is trained on these names. */
export const taskInputSchema = z.object({
  description: z.string().trim().min(1, 'describe the task in a few words').max(200, 'the description is a few words (at most 200 characters)'),
  prompt: z.string().trim().min(1, 'the prompt is the whole task for the subagent'),
  subagent_type: z.string().trim().min(1, 'name the subagent type'),
});
export type TaskInput = z.infer<typeof taskInputSchema>;

/** Starts (or, for the same call after a restart, finds again) the subagent and returns its outcome. */
export type SubagentLauncher = (input: TaskInput, ctx: ToolContext) => Promise<ToolResult>;

/**
 * Task: runs a subagent — a child run with its own conversation, its own (narrower) tools and the
 * same permission gate — and returns its final message. The subagent's own calls each pass the
 * gate; the Task call itself changes nothing, so it is read-only, which is also what lets several
 * Task calls of one turn run concurrently. It is resumable: after a restart the loop calls it again
 * with the same call id and it re-attaches to the subagent instead of reporting it interrupted.
 */
export function createTaskTool(options: { launch: SubagentLauncher; types: ReadonlyArray<{ name: string; description: string }> }): Tool<TaskInput> {
  return defineTool({
    name: 'Task',
    description: taskDescription(options.types),
    inputSchema: taskInputSchema,
    risk: 'LOW',
    readOnly: true,
    resumable: true,
    execute: (input, ctx) => options.launch(input, ctx),
  });
}

/**
 * The Task tool is made per run (its launcher knows the run) but its description depends only on
 * the subagent types: runs alike share one string instead of each holding its own (~700 bytes).
 */
const descriptions = new TextPool();

function taskDescription(types: ReadonlyArray<{ name: string; description: string }>): string {
  const list = types.map((t) => `- ${t.name}: ${t.description}`).join('\n');
  return descriptions.share(`Launch a subagent to handle a self-contained task (searching a codebase, planning, a multi-step job) in its own context; it returns one final report. Launch several in one turn to run them concurrently. Available subagent types:\n${list}`);
}
