import { z } from 'zod';
import { runEventSchema } from '../events/index.js';
import { interactionRequestSchema, interactionResponseSchema } from '../interaction/index.js';
import { permissionModeSchema } from '../permission/index.js';
import { askContextSchema } from '../runtime/ask-context.js';
import { ruleTextSchema } from '../runtime/rule-text.js';

/**
 * Every request the API accepts and every body it returns, as zod schemas. The routes validate
 * with them and `/openapi.json` is generated from them, so the document cannot drift from the code.
 */

/** A permission rule as written: the same schema the server policy checks its lists with. */
export { ruleTextSchema };

export const startRunBodySchema = z
  .object({
    task: z.string().min(1, 'the task cannot be empty').max(100_000),
    /** A model spec such as `anthropic:claude-sonnet-4-5` or `scripted:/abs/path.json`; the server's default otherwise. */
    model: z.string().min(1).max(1_000).optional(),
    /** The working directory; must be inside one of the server's allowed roots. */
    cwd: z.string().min(1).max(4_096).optional(),
    permissionMode: permissionModeSchema.optional(),
    allow: z.array(ruleTextSchema).max(200).optional(),
    ask: z.array(ruleTextSchema).max(200).optional(),
    deny: z.array(ruleTextSchema).max(200).optional(),
    maxSteps: z.number().int().min(1).max(1_000).optional(),
    /** An external coding agent (a preset the operator allows: `sage serve --agents`); its command is the host's. */
    agent: z.string().min(1).max(64).optional(),
    /** The agent's OS sandbox; `off` only where the operator allowed it (`sage serve --allow-unsandboxed-agents`). */
    sandbox: z.enum(['on', 'off'], { message: 'sandbox must be "on" or "off"' }).optional(),
  })
  .strict();
export type StartRunBody = z.infer<typeof startRunBodySchema>;

export const messageBodySchema = z.object({ text: z.string().min(1, 'the message cannot be empty').max(100_000) }).strict();

export const cancelBodySchema = z.object({ reason: z.string().max(1_000).optional() }).strict();

/** `POST /runs/{id}/close` takes no fields (an empty body or `{}`). */
export const closeBodySchema = z.object({}).strict();

export const ruleBodySchema = z.object({ rule: ruleTextSchema }).strict();
/** A rule named to be removed: matched against the stored list as written, never parsed. */
export const storedRuleSchema = z.string().min(1, 'a rule cannot be empty').max(1_000, 'a rule is at most 1000 characters');

const RUN_STATUSES = ['running', 'idle', 'suspended', 'completed', 'failed', 'cancelled', 'max_steps'] as const;
const INTERACTION_STATUSES = ['pending', 'answered', 'expired', 'cancelled'] as const;
export const runStatusSchema = z.enum(RUN_STATUSES);
export const interactionStatusSchema = z.enum(INTERACTION_STATUSES);

const limitSchema = z.coerce.number().int().min(1).max(1_000).optional();

/** `?status=a,b` as an array. */
const csv = <const V extends readonly [string, ...string[]]>(values: V) =>
  z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.enum(values)))
    .optional();

export const runsQuerySchema = z.object({ status: csv(RUN_STATUSES), userId: z.string().optional(), limit: limitSchema }).strict();
export const interactionsQuerySchema = z.object({ status: csv(INTERACTION_STATUSES), runId: z.string().optional(), limit: limitSchema }).strict();
export const auditQuerySchema = z
  .object({
    runId: z.string().optional(),
    userId: z.string().optional(),
    decision: z.enum(['allow', 'deny', 'ask']).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional().describe('entries before this time'),
    format: z.enum(['json', 'csv']).optional().describe('answer a download in this format'),
    limit: limitSchema,
  })
  .strict();

export const permissionKindSchema = z.enum(['allow', 'deny']);

// Response bodies (documented in /openapi.json; the web client parses events with runEventSchema).

export const errorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }),
});

export const runSchema = z.object({
  id: z.string(),
  status: runStatusSchema.describe(
    'running: working, or waiting in memory for an approval or a question (see waitingFor); idle: it answered and waits for the next message ' +
      '(POST /runs/{id}/messages goes on, POST /runs/{id}/close ends it completed); suspended: released from memory while waiting for an ' +
      'approval or a question; completed, failed, cancelled, max_steps: finished.',
  ),
  waitingFor: z
    .enum(['approval', 'question', 'message'])
    .nullable()
    .describe('What the run needs from a person now: approval (a permission ask), question (a question or another ask), message (its next message; the run is idle), or null.'),
  userId: z.string(),
  sessionId: z.string(),
  channel: z.string(),
  task: z.string(),
  model: z.string().nullable(),
  pendingInteractionId: z.string().nullable(),
  finalText: z.string().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type RunView = z.infer<typeof runSchema>;

export const interactionSchema = z.object({
  id: z.string(),
  runId: z.string(),
  userId: z.string(),
  kind: z.string(),
  status: interactionStatusSchema,
  request: interactionRequestSchema,
  response: interactionResponseSchema.nullable(),
  answeredBy: z.string().nullable(),
  answeredAt: z.string().nullable(),
  reason: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  closedAt: z.string().nullable(),
  /** Which task, folder, asker, risk and mode the ask belongs to (absent only when its run is gone). */
  context: askContextSchema.optional(),
});
export type InteractionView = z.infer<typeof interactionSchema>;

export const suspendedSchema = z.object({ runId: z.string(), status: runStatusSchema, interaction: interactionSchema });

export const permissionRecordSchema = z.object({ rule: z.string(), createdAt: z.string(), createdBy: z.string().nullable() });
export const permissionsSchema = z.object({ userId: z.string(), allow: z.array(permissionRecordSchema), deny: z.array(permissionRecordSchema) });

export const auditEntrySchema = z.object({
  at: z.string(),
  runId: z.string().nullable(),
  userId: z.string().nullable(),
  toolCallId: z.string().nullable(),
  toolName: z.string().nullable(),
  behavior: z.enum(['allow', 'deny', 'ask']),
  reason: z.string(),
  source: z.string(),
  rule: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).nullable(),
});

export const meSchema = z.object({
  userId: z.string(),
  role: z.enum(['user', 'admin']),
  auth: z.boolean(),
  permissionModes: z.array(permissionModeSchema).describe('the modes the server policy lets a client pick'),
  roots: z.array(z.string()).describe("the working directories a run's cwd may be in"),
});
export const modelsSchema = z.object({ defaultModel: z.string().nullable(), scriptedModels: z.array(z.string()) });
export const rootsSchema = z.object({ roots: z.array(z.string()) });
/** A frame of GET /events (data); the SSE event name is its `type`. */
export const userEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run'), runId: z.string(), status: z.string() }),
  z.object({ type: z.literal('interaction'), runId: z.string(), interactionId: z.string(), status: z.string() }),
  z.object({ type: z.literal('resync') }),
]);
/** The store as last seen: `ok`, or down (`unavailable`) or full since `storeSince`. */
const storeStateFields = {
  storeStatus: z.enum(['ok', 'unavailable', 'disk_full']),
  storeError: z.object({ code: z.string(), message: z.string(), since: z.string() }).optional(),
};
export const healthSchema = z.object({ status: z.enum(['ok', 'shutting_down']), store: z.string(), uptimeMs: z.number(), ...storeStateFields });
export const readySchema = z.object({ status: z.literal('ready'), store: z.string(), ...storeStateFields });

export { runEventSchema, interactionResponseSchema, permissionModeSchema };
