import { z } from 'zod';

const answerValue = z.union([z.string(), z.array(z.string())]);

/** Base fields of an answer; `responses` nests answers for a combined request's items. */
const itemResponseSchema = z.object({
  kind: z.enum(['input', 'select', 'confirm', 'questions']),
  text: z.string().optional(),
  selected: z.array(z.string()).optional(),
  confirmed: z.boolean().optional(),
  answers: z.record(z.string(), answerValue).optional(),
  updatedInput: z.unknown().optional(),
  message: z.string().optional(),
});

export const rememberSchema = z.enum(['once', 'session', 'local', 'project', 'user']);
export type Remember = z.infer<typeof rememberSchema>;

export const interactionResponseSchema = z
  .object({
    requestId: z.string().min(1),
    kind: z.enum(['input', 'select', 'confirm', 'questions', 'combined']),
    text: z.string().optional(),
    selected: z.array(z.string()).optional(),
    confirmed: z.boolean().optional(),
    answers: z.record(z.string(), answerValue).optional(),
    responses: z.record(z.string(), itemResponseSchema).optional(),
    /** A confirm answer may carry the input as the person edited it. */
    updatedInput: z.unknown().optional(),
    /** A note for the agent, e.g. why a permission was denied. */
    message: z.string().max(10_000).optional(),
    /** For an approval: remember it once, for the session, or as a rule in a settings scope. */
    remember: rememberSchema.optional(),
    /** The suggested rule the person picked for `remember`. */
    rule: z.string().optional(),
    userId: z.string().optional(),
    /**
     * The surface the answer came through (web, cli, terminal, a chat channel), for the audit log.
     * Set by whoever stamps `userId` (the server, the CLI), never taken from a remote client as is.
     */
    // 128: a chat channel's id is `kind:name` with a name of up to 64 characters (`telegram:support`).
    channel: z.string().max(128).optional(),
    respondedAt: z.string().optional(),
  })
  .strict();

export type InteractionResponseInput = z.input<typeof interactionResponseSchema>;
export type InteractionResponse = z.infer<typeof interactionResponseSchema> & { respondedAt: string };
export type ItemResponse = z.infer<typeof itemResponseSchema>;
