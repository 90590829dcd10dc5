import { z } from 'zod';
import { defineTool, type Tool, type ToolContext, type ToolResult } from '../types.js';

export const skillInputSchema = z.object({
  skill: z.string().trim().min(1, 'name the skill to load'),
  args: z.string().optional(),
});
export type SkillInput = z.infer<typeof skillInputSchema>;

/** Loads a skill for the run: its instructions, and its allowed tools granted while it is active. */
export type SkillLoader = (input: SkillInput, ctx: ToolContext) => ToolResult | Promise<ToolResult>;

/**
 * Skill: loads one of the skills listed in the system prompt (its SKILL.md instructions come back
 * as the result). Loading changes nothing, so it is read-only; while the skill is active its
 * allowed tools run without asking, which the run's gate decides (deny rules still win).
 */
export function createSkillTool(options: { load: SkillLoader }): Tool<SkillInput> {
  return defineTool({
    name: 'Skill',
    description: 'Load a skill listed under "Skills" in the system prompt: returns its instructions, which you then follow. `skill` is its name; `args` optional text for it. Load a skill when the task matches its description.',
    inputSchema: skillInputSchema,
    risk: 'LOW',
    readOnly: true,
    execute: async (input, ctx) => options.load(input, ctx),
  });
}
