import type { z } from 'zod';
import { formatZodError } from '../../../errors/index.js';
import type { ToolContext, ToolResult } from '../../types.js';
import { describeFsError } from './fs-error.js';

/**
 * Wraps a built-in's body so the loop never sees a throw: the input is validated again with the
 * tool's own schema (execute may be called directly, not only through the loop), and any error,
 * an OS error included, becomes an error result the model can read and act on.
 */
export function guardedExecute<S extends z.ZodType>(
  toolName: string,
  schema: S,
  run: (input: z.infer<S>, ctx: ToolContext) => Promise<ToolResult>,
): (input: z.infer<S>, ctx: ToolContext) => Promise<ToolResult> {
  return async (raw, ctx) => {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      return { content: `Invalid input for ${toolName}: ${formatZodError(parsed.error)}`, isError: true };
    }
    try {
      return await run(parsed.data, ctx);
    } catch (error) {
      return { content: `${toolName} failed: ${describeFsError(error)}`, isError: true };
    }
  };
}

/** Shorthand for the error results every built-in returns. */
export function errorResult(content: string, data?: unknown): ToolResult {
  return data === undefined ? { content, isError: true } : { content, isError: true, data };
}
