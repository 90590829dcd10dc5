import { z } from 'zod';

/**
 * The events a run emits. One schema shared by the loop, the store, the SSE wire and the web
 * client; `seq` is monotonic per run and doubles as the SSE event id.
 */

const lifecycleStateSchema = z.object({
  state: z.string(),
  phase: z.string().optional(),
});

const decisionSchema = z.object({
  behavior: z.enum(['allow', 'deny', 'ask']),
  reason: z.string(),
  rule: z.string().optional(),
  ruleSource: z.string().optional(),
  source: z.string(),
});

const usageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() });

/**
 * Which subagent an event comes from: on every event of a subagent's run, and on the copies of its
 * events relayed into its parent's stream (`id` is the subagent's run id, `type` its subagent type).
 */
export const agentRefSchema = z.object({ id: z.string().min(1), type: z.string().min(1) });
export type AgentRef = z.infer<typeof agentRefSchema>;

const baseDataSchemas = {
  'run.started': z.object({ task: z.string(), mode: z.string(), model: z.string(), cwd: z.string() }),
  'run.completed': z.object({ status: z.string(), finalText: z.string(), stats: z.record(z.string(), z.number()) }),
  'run.failed': z.object({ code: z.string(), message: z.string() }),
  'run.cancelled': z.object({ reason: z.string() }),
  'run.suspended': z.object({ interactionId: z.string().optional(), reason: z.string() }),
  'run.resumed': z.object({ fromSeq: z.number(), interactionId: z.string().optional() }),
  'state.changed': z.object({ from: lifecycleStateSchema, to: lifecycleStateSchema }),
  'step.started': z.object({ step: z.number() }),
  'step.completed': z.object({ step: z.number(), toolCalls: z.number() }),
  'message.delta': z.object({ text: z.string() }),
  'message.completed': z.object({
    role: z.literal('assistant'),
    text: z.string(),
    toolCalls: z.array(z.object({ id: z.string(), name: z.string(), input: z.unknown() })),
    usage: usageSchema.optional(),
  }),
  'tool.requested': z.object({ toolCallId: z.string(), toolName: z.string(), input: z.unknown() }),
  'permission.decided': z.object({ toolCallId: z.string(), toolName: z.string() }).extend(decisionSchema.shape),
  'tool.started': z.object({ toolCallId: z.string(), toolName: z.string(), input: z.unknown() }),
  'tool.completed': z.object({
    toolCallId: z.string(),
    toolName: z.string(),
    isError: z.boolean(),
    content: z.string(),
    durationMs: z.number(),
    /**
     * The whole output when `content` (what the model read) was cut (ToolResult.fullContent). The
     * server's event stream sends `fullContentChars` in its place and serves the text at
     * GET /runs/:id/tool-calls/:toolCallId/output.
     */
    fullContent: z.string().optional(),
    /**
     * An external agent ran this call on its own, without asking Sage's gate first: nobody decided
     * it (no permission.decided), it is only reported. Never set for a call the gate allowed.
     */
    ungated: z.literal(true).optional(),
    /** Set by the server's event stream instead of `fullContent`: how long the whole output is. */
    fullContentChars: z.number().int().nonnegative().optional(),
  }),
  'interaction.requested': z.object({ request: z.record(z.string(), z.unknown()) }),
  'interaction.answered': z.object({ interactionId: z.string(), response: z.record(z.string(), z.unknown()) }),
  'interaction.expired': z.object({ interactionId: z.string(), reason: z.string() }),
  'interaction.cancelled': z.object({ interactionId: z.string(), reason: z.string() }),
  'context.compacted': z.object({ removedMessages: z.number(), summaryChars: z.number(), tokensBefore: z.number(), tokensAfter: z.number() }),
  /** An external agent's own session (Claude Code's session id): a follow-up continues it; cost where it reports one. */
  'agent.session': z.object({ agentName: z.string(), sessionId: z.string(), costUsd: z.number().optional() }),
  /** A line from an external agent that Sage does not interpret, kept in the run's log as it came. */
  'agent.output': z.object({ agentName: z.string(), line: z.string() }),
  /**
   * How an external agent's process is confined: `on` (its OS sandbox; `masked` are the paths of the
   * run's Read deny rules hidden inside, `incomplete` the rules whose paths could not all be found),
   * or `off` (unconfined: `warning` says what that means).
   */
  'agent.sandbox': z.object({ agentName: z.string(), sandbox: z.enum(['on', 'off']), masked: z.array(z.string()), incomplete: z.array(z.string()), warning: z.string().optional() }),
  /** One step of the action chain around the work (a setup or cleanup script): its output, exit code and duration. */
  'chain.step': z.object({ step: z.enum(['setup', 'cleanup']), command: z.string(), exitCode: z.number().nullable(), durationMs: z.number(), output: z.string(), finalize: z.boolean() }),
} as const;

type WithAgent<T extends Record<string, z.ZodObject>> = { [K in keyof T]: z.ZodObject<T[K]['shape'] & { agent: z.ZodOptional<typeof agentRefSchema> }> };

/** Each event's data, with the optional `agent` of a subagent's event (additive: old events still parse). */
export const runEventDataSchemas = Object.fromEntries(
  Object.entries(baseDataSchemas).map(([type, schema]) => [type, schema.extend({ agent: agentRefSchema.optional() })]),
) as unknown as WithAgent<typeof baseDataSchemas>;

export type RunEventType = keyof typeof runEventDataSchemas;
export const runEventTypes = Object.keys(runEventDataSchemas) as RunEventType[];

export type RunEventData<T extends RunEventType> = z.infer<(typeof runEventDataSchemas)[T]>;

export type RunEventOf<T extends RunEventType> = {
  seq: number;
  runId: string;
  type: T;
  /** ISO-8601 timestamp. */
  at: string;
  data: RunEventData<T>;
};

export type RunEvent = { [T in RunEventType]: RunEventOf<T> }[RunEventType];

const eventSchemas = runEventTypes.map((type) =>
  z.object({
    seq: z.number().int().nonnegative(),
    runId: z.string(),
    type: z.literal(type),
    at: z.string(),
    data: runEventDataSchemas[type],
  }),
);

/** Validates an event read from the wire or the store. */
export const runEventSchema = z.discriminatedUnion(
  'type',
  eventSchemas as unknown as [(typeof eventSchemas)[number], ...(typeof eventSchemas)[number][]],
);
