import type { z } from 'zod';
import type { RunEvent } from '../events/index.js';
import type { InteractionDraft, InteractionOutcome } from '../interaction/index.js';
import type { ToolImage } from '../model/types.js';
import type { GateContext, RiskLevel, ToolPermissionCheck } from '../permission/types.js';

/** What a tool gives back; `content` is what the model reads. */
export interface ToolResult {
  content: string;
  isError?: boolean;
  /**
   * Images the model should see besides `content` (an MCP tool's screenshot). They travel in the
   * conversation (and its checkpoints), not in events: `content` should name each one (type and
   * size), which is what events and logs show. Not sent with an error result. The loop keeps only
   * PNG, JPEG, GIF and WebP as plain base64 (`MODEL_IMAGE_MEDIA_TYPES`); it names any other in the text.
   */
  images?: ToolImage[];
  /** Structured detail for front ends (a diff, an exit code); not sent to the model. */
  data?: unknown;
  /**
   * The whole text when `content` was cut for the model (Bash keeps 30,000 characters per stream):
   * it goes only into the call's `tool.completed` event, so a person can read, copy or download
   * all of it; never to the model, the conversation or the checkpoint.
   */
  fullContent?: string;
}

/** Everything a running tool may use. */
export interface ToolContext {
  runId: string;
  sessionId: string;
  userId: string;
  toolCallId: string;
  /** The run's working directory (the project root). */
  cwd: string;
  /** Aborted when the run is cancelled or the call times out: stop work and clean up. */
  signal: AbortSignal;
  /** Ask a person; resolves with how the interaction ended (answered, expired, cancelled). */
  interact(draft: InteractionDraft, options?: { timeoutMs?: number }): Promise<InteractionOutcome>;
  /** State shared by the tools of one run (e.g. which files were read, for Write's read-first rule). */
  runState: Map<string, unknown>;
  /** Which subagent is running the tool, when not the main agent. */
  agent?: string;
  /** Re-emits an event of a subagent in this run's stream (its data carries `agent`). */
  relayEvent?(event: RunEvent): void;
  /** Adds a subagent's token usage to this run's. */
  addUsage?(usage: { inputTokens: number; outputTokens: number }): void;
}

/**
 * A tool the model can call. The input schema is zod (sent to the model as JSON Schema and used
 * to validate what the model sends); input that does not validate becomes an error result.
 */
export interface Tool<Input = any> {
  name: string;
  description: string;
  inputSchema: z.ZodType<Input>;
  /** Fixed, or classified from the input. The gate may raise or lower it: a Bash command is judged by its shell classifier. */
  risk: RiskLevel | ((input: Input) => RiskLevel);
  /** Read-only tools never change anything and may run concurrently. */
  readOnly: boolean;
  /** The tool's execution is itself an interaction (AskUserQuestion): no approval needed. */
  requiresUserInteraction?: boolean;
  /**
   * After a restart, a call of this tool that had started but has no result is run again with the
   * same call id instead of being reported interrupted: the tool finds the work it started (Task
   * re-attaches to its subagent run). Only for tools whose execute is safe to repeat that way.
   */
  resumable?: boolean;
  /** What permission rules match against: the command for Bash, the absolute path for Read. */
  permissionResource?(input: Input, ctx: { cwd: string }): string | undefined;
  checkPermissions?(input: Input, ctx: GateContext): ToolPermissionCheck | Promise<ToolPermissionCheck>;
  /**
   * The tool's own preconditions (read-before-edit, file unchanged since read, text present): why
   * the call would fail as it stands, or undefined when it can run. Checked after the gate's deny
   * rules and before a person is asked, so nobody approves a call that cannot work. `execute`
   * must still check them (the file may change between the ask and the run).
   */
  validate?(input: Input, ctx: ToolContext): string | undefined | Promise<string | undefined>;
  execute(input: Input, ctx: ToolContext): Promise<ToolResult | string>;
}

/** Helper that keeps the input type inferred from the schema. */
export function defineTool<S extends z.ZodType>(tool: Tool<z.infer<S>> & { inputSchema: S }): Tool<z.infer<S>> {
  return tool;
}
