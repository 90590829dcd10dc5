import { z } from 'zod';
import { RUN_SURFACES } from '../durable/stored-options.js';

/**
 * What a subagent's run keeps of where it comes from, in `metadata.subagent`: the Task call that
 * started it (so a restarted Task call finds it), its parent and root, the surface of the root run
 * (its gate and model policy are that surface's: a web run's subagent gets the web gate), its depth.
 */
export const subagentMetaSchema = z
  .object({
    type: z.string().min(1),
    description: z.string(),
    toolCallId: z.string().min(1),
    parentRunId: z.string().min(1),
    rootRunId: z.string().min(1),
    rootSurface: z.enum(RUN_SURFACES).exclude(['subagent']),
    depth: z.number().int().positive(),
  })
  .strict();
export type SubagentMeta = z.infer<typeof subagentMetaSchema>;

/**
 * A subagent's run id, derived from its parent's and the Task call's: one call has one subagent,
 * and a Task call run again after a restart finds it by id.
 */
export function childRunId(parentRunId: string, toolCallId: string): string {
  return `${parentRunId}.task.${toolCallId}`;
}
