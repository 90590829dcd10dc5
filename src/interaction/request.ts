import { z } from 'zod';

/** A permission suggestion carried by a confirm request. */
export const permissionSuggestionSchema = z.object({
  type: z.enum(['addRule', 'removeRule', 'modifyRule']).default('addRule'),
  toolName: z.string(),
  rule: z.string(),
  behavior: z.enum(['allow', 'deny', 'ask']),
  destination: z.enum(['session', 'localSettings', 'projectSettings', 'userSettings']),
});
export type PermissionSuggestion = z.infer<typeof permissionSuggestionSchema>;

export const questionOptionSchema = z.object({
  label: z.string().min(1),
  description: z.string().default(''),
});

/** One AskUserQuestion question. */
export const questionSchema = z.object({
  question: z.string().min(1),
  header: z.string().min(1).max(12, 'header must be at most 12 characters'),
  options: z.array(questionOptionSchema).min(2, 'a question needs 2-4 options').max(4, 'a question needs 2-4 options'),
  multiSelect: z.boolean().default(false),
});
export type Question = z.infer<typeof questionSchema>;

const inputBody = z.object({
  kind: z.literal('input'),
  placeholder: z.string().optional(),
  multiline: z.boolean().optional(),
  required: z.boolean().optional(),
  defaultValue: z.string().optional(),
});

const selectBody = z.object({
  kind: z.literal('select'),
  options: z
    .array(z.object({ value: z.string(), label: z.string(), description: z.string().optional() }))
    .min(1),
  multiple: z.boolean().optional(),
  /** The values a form shows chosen at first (an MCP server's `default`). */
  defaultSelected: z.array(z.string()).optional(),
});

const confirmBody = z.object({
  kind: z.literal('confirm'),
  confirmText: z.string().optional(),
  cancelText: z.string().optional(),
  /** The answer a form shows at first (an MCP server's boolean `default`). */
  defaultConfirmed: z.boolean().optional(),
  /** For a permission ask: the exact input the person is approving. */
  input: z.unknown().optional(),
  /** Why the gate asks. */
  reason: z.string().optional(),
  suggestions: z.array(permissionSuggestionSchema).optional(),
  /** Whether the person may edit the input before approving. */
  editable: z.boolean().optional(),
});

const questionsBody = z.object({
  kind: z.literal('questions'),
  questions: z.array(questionSchema).min(1, 'ask 1-4 questions').max(4, 'ask 1-4 questions'),
});

const itemBodies = z.discriminatedUnion('kind', [inputBody, selectBody, confirmBody, questionsBody]);

const combinedBody = z.object({
  kind: z.literal('combined'),
  items: z
    // `optional`: the response may leave the item out (an MCP form's field that is not required).
    .array(z.object({ key: z.string().min(1), title: z.string(), optional: z.boolean().optional() }).and(itemBodies))
    .min(1),
});

const common = z.object({
  id: z.string().min(1),
  runId: z.string().min(1),
  title: z.string(),
  description: z.string().optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  /**
   * Which subagent asked, when not the main agent: its run id and subagent type (a bare string,
   * the type, is still read for requests stored before).
   */
  agent: z.union([z.string(), z.object({ id: z.string().min(1), type: z.string().min(1) })]).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.string(),
  expiresAt: z.string().optional(),
});

export const interactionRequestSchema = z.discriminatedUnion('kind', [
  common.extend(inputBody.shape),
  common.extend(selectBody.shape),
  common.extend(confirmBody.shape),
  common.extend(questionsBody.shape),
  common.extend(combinedBody.shape),
]);

export type InteractionRequest = z.infer<typeof interactionRequestSchema>;
export type InteractionKind = InteractionRequest['kind'];
export type InteractionRequestOf<K extends InteractionKind> = Extract<InteractionRequest, { kind: K }>;
export type CombinedItem = InteractionRequestOf<'combined'>['items'][number];

/** What code passes to `ctx.interact()`: the broker fills in id, runId and timestamps. */
export type InteractionDraft = InteractionRequest extends infer R
  ? R extends InteractionRequest
    ? Omit<R, 'id' | 'runId' | 'createdAt' | 'expiresAt'> & { id?: string }
    : never
  : never;
