import { z } from 'zod';
import { InvalidInputError, formatZodError } from '../errors/index.js';

/**
 * What a durable run keeps of its options, so any process can rebuild it: the model as a spec
 * string (`scripted:/abs/path.json`, `anthropic:claude-…`) that the runtime turns into a Model.
 * Functions (responders, hooks) cannot be stored; the runtime supplies them again.
 */
export const storedRunOptionsSchema = z
  .object({
    version: z.literal(1).default(1),
    model: z.string().min(1, 'a durable run needs a model spec'),
    mode: z.enum(['interactive', 'non-interactive', 'batch']).default('interactive'),
    /** non-interactive mode: how asks are answered. */
    autoResponse: z.enum(['allow', 'deny', 'default']).optional(),
    maxSteps: z.number().int().positive().optional(),
    system: z.string().optional(),
    cwd: z.string().optional(),
    /** How long one ask waits before its timeout behaviour (deny a permission, cancel a question), ms. */
    interactionTimeoutMs: z.number().int().nonnegative().optional(),
    executionTimeoutMs: z.number().int().positive().optional(),
    history: z.array(z.record(z.string(), z.unknown())).optional(),
    /** Anything the caller wants back (labels, the web client's thread id). */
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export type StoredRunOptions = z.infer<typeof storedRunOptionsSchema>;
export type StoredRunOptionsInput = z.input<typeof storedRunOptionsSchema>;

export function parseStoredOptions(value: unknown, source = 'run options'): StoredRunOptions {
  const parsed = storedRunOptionsSchema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`${source}: ${formatZodError(parsed.error)}`);
  return parsed.data;
}
