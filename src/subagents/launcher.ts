import type { DurableOutcome, DurableRunHandle, DurableRunner, StartOptions } from '../durable/durable-runner.js';
import { RunLeftError, RunRebuildError } from '../durable/errors.js';
import type { RunSurface } from '../durable/stored-options.js';
import type { RunEvent } from '../events/index.js';
import { FINISHED_STATUSES, RunBusyError, type RunRecord } from '../store/index.js';
import type { SubagentLauncher, TaskInput } from '../tool/builtin/task.js';
import type { ToolContext, ToolResult } from '../tool/types.js';
import type { SubagentCatalog } from './load-agent.js';
import { childCwd, childTools, isInside, stricterMode } from './narrow.js';
import type { SubagentPermissionMode } from './definition.js';
import { childRunId, type SubagentMeta } from './subagent-meta.js';

/** The parent run as the launcher needs it (read from its RunSpec by the factory). */
export interface ParentRun {
  record: RunRecord;
  model: string;
  baseUrl?: string;
  cwd: string;
  /** The outermost folder whose settings apply to the parent (its project root). */
  projectRoot?: string;
  additionalDirectories: string[];
  surface: RunSurface;
  /** The surface whose gate and model policy the parent's subagents get (its root run's). */
  rootSurface: Exclude<RunSurface, 'subagent'>;
  /** Whether a model an agent file names may be used (the person chose the root's model, not a server). */
  ownModel: boolean;
  startedBy: string;
  permissionMode?: SubagentPermissionMode;
  rules: Array<{ behavior: 'allow' | 'ask' | 'deny'; rule: string; source: string }>;
  /** A server-gated parent's grant (its requester's role, the policy's lists then): its subagents keep it. */
  server?: { role: 'user' | 'admin'; deny: string[]; ask: string[] };
  /** The names of the tools the parent has. */
  tools: string[];
  mode: 'interactive' | 'non-interactive' | 'batch';
  autoResponse?: 'allow' | 'deny' | 'default';
  interactionTimeoutMs?: number;
  maxSteps?: number;
  /** Set when the parent is itself a subagent. */
  subagent?: SubagentMeta;
  /** The parent's MCP servers (src/mcp): a subagent given any of their tools starts its own. */
  mcpServers?: Record<string, Record<string, unknown>>;
}

/** The chat a run answers to (`origin.channel` / `chatId` / `threadId`), kept by its subagents. */
function chatOf(record: RunRecord): ChildRunInput['chat'] {
  const origin = record.options['origin'] as { channel?: unknown; chatId?: unknown; threadId?: unknown } | undefined;
  if (typeof origin?.channel !== 'string' || typeof origin.chatId !== 'string') return undefined;
  return { channel: origin.channel, chatId: origin.chatId, ...(typeof origin.threadId === 'string' ? { threadId: origin.threadId } : {}) };
}

/** What the factory's `admitRun` takes for a subagent (a subset of its RunRequest). */
export interface ChildRunInput {
  task: string;
  surface: 'subagent';
  model: string;
  baseUrl?: string;
  cwd: string;
  projectRoot?: string;
  additionalDirectories?: string[];
  mode: 'interactive' | 'non-interactive' | 'batch';
  autoResponse?: 'allow' | 'deny' | 'default';
  permissionMode?: SubagentPermissionMode;
  rules: ParentRun['rules'];
  server?: ParentRun['server'];
  tools: string[];
  oneTask: true;
  maxSteps?: number;
  interactionTimeoutMs?: number;
  principal: string;
  parentRunId: string;
  metadata: Record<string, unknown>;
  /** The subagent's role: the opening of its system prompt. */
  intro: string;
  /** The chat of a chat run, so a chat hub can show its subagent's asks where the parent's go. */
  chat?: { channel: string; chatId: string; threadId?: string };
  mcpServers?: Record<string, Record<string, unknown>>;
}

export interface LauncherOptions {
  runner: DurableRunner;
  parent: ParentRun;
  catalog: () => SubagentCatalog;
  /** How deep subagents may nest: 1 (the default) lets only the main agent start them. */
  maxDepth: number;
  newChild(child: ChildRunInput): Promise<StartOptions>;
  /** Where a subagent's events are relayed while its Task call waits (read by the factory's loopExtras). */
  relays: Map<string, (event: RunEvent) => void>;
}

/** The events of a subagent copied into its parent's stream: what it does and asks, not its lifecycle. */
const RELAYED = new Set<RunEvent['type']>(['message.completed', 'tool.requested', 'permission.decided', 'tool.started', 'tool.completed', 'interaction.requested', 'interaction.answered', 'interaction.expired', 'interaction.cancelled']);

/**
 * The Task tool's work for one parent run: start the subagent as a child run through the same
 * runner (or find it again after a restart), relay its events into the parent's stream, follow the
 * parent's cancel or suspension, and return its final message as the tool result.
 */
export function createLauncher(options: LauncherOptions): SubagentLauncher {
  const { runner, parent } = options;
  return async (input: TaskInput, ctx: ToolContext): Promise<ToolResult> => {
    const catalog = options.catalog();
    const definition = catalog.agents.find((a) => a.name === input.subagent_type);
    if (!definition) {
      return { content: `There is no subagent type "${input.subagent_type}". Use one of: ${catalog.agents.map((a) => a.name).join(', ')}.`, isError: true };
    }
    const depth = (parent.subagent?.depth ?? 0) + 1;
    if (depth > options.maxDepth) return { content: `Subagents may not start subagents here (nesting depth ${options.maxDepth}). Do the task yourself.`, isError: true };
    const id = childRunId(parent.record.id, ctx.toolCallId);
    const agent = { id, type: definition.name };
    options.relays.set(id, (event) => {
      if (RELAYED.has(event.type)) ctx.relayEvent?.(event);
    });
    try {
      let handle: DurableRunHandle | undefined;
      const existing = await runner.store.getRun(id);
      if (existing && FINISHED_STATUSES.includes(existing.status)) return finishedResult(runner, existing, agent.type, ctx);
      if (existing) handle = runner.handle(id) ?? (await resumeOrWait(runner, id, ctx.signal));
      else {
        const where = childCwd(definition, parent.cwd, parent.additionalDirectories);
        if ('error' in where) return { content: `The ${definition.name} subagent cannot start: ${where.error}.`, isError: true };
        const meta: SubagentMeta = {
          type: definition.name,
          description: input.description,
          toolCallId: ctx.toolCallId,
          parentRunId: parent.record.id,
          rootRunId: parent.subagent?.rootRunId ?? parent.record.id,
          rootSurface: parent.rootSurface,
          depth,
        };
        const parentMeta = { ...((parent.record.options['metadata'] as Record<string, unknown> | undefined) ?? {}) };
        delete parentMeta['subagent'];
        // A web or chat run's gate reads the client's lists and mode from metadata: the subagent
        // keeps them, with the mode narrowed like the RunSpec's.
        if (typeof parentMeta['permissionMode'] === 'string') parentMeta['permissionMode'] = stricterMode(parentMeta['permissionMode'] as SubagentPermissionMode, definition.permissionMode);
        const mode = stricterMode(parent.permissionMode, definition.permissionMode);
        const tools = childTools(definition, parent.tools, depth < options.maxDepth);
        // Only the servers whose tools it keeps (`mcp__<server>__<tool>`): its own processes, same gate.
        const servers = Object.fromEntries(Object.entries(parent.mcpServers ?? {}).filter(([name]) => tools.some((t) => t.startsWith(`mcp__${name}__`))));
        // A model the agent file names is used only where the person chose the model (not through
        // a server, whose run policy decides which models clients may name).
        const ownModel = definition.model && parent.ownModel ? definition.model : undefined;
        const spec = await options.newChild({
          task: input.prompt,
          surface: 'subagent',
          model: ownModel ?? parent.model,
          ...(parent.baseUrl && !ownModel ? { baseUrl: parent.baseUrl } : {}),
          cwd: where.cwd,
          // The parent's project: the denies of the folders between it and the child's folder apply.
          ...(parent.projectRoot && isInside(parent.projectRoot, where.cwd) ? { projectRoot: parent.projectRoot } : {}),
          ...(parent.additionalDirectories.length ? { additionalDirectories: parent.additionalDirectories } : {}),
          mode: parent.mode,
          ...(parent.autoResponse ? { autoResponse: parent.autoResponse } : {}),
          ...(mode ? { permissionMode: mode } : {}),
          rules: parent.rules,
          ...(parent.server ? { server: parent.server } : {}),
          tools,
          ...(Object.keys(servers).length ? { mcpServers: servers } : {}),
          oneTask: true,
          ...(parent.maxSteps ? { maxSteps: parent.maxSteps } : {}),
          ...(parent.interactionTimeoutMs !== undefined ? { interactionTimeoutMs: parent.interactionTimeoutMs } : {}),
          principal: parent.startedBy,
          parentRunId: parent.record.id,
          metadata: { ...parentMeta, subagent: meta },
          intro: definition.prompt,
          ...(chatOf(parent.record) ? { chat: chatOf(parent.record) } : {}),
        });
        try {
          handle = await runner.start(input.prompt, { ...spec, runId: id, userId: parent.record.userId, sessionId: parent.record.sessionId, channel: parent.record.channel });
        } catch (error) {
          // Its model, tools or gate could not be built (the run is stored as failed, with the reason).
          if (error instanceof RunRebuildError || error instanceof RunLeftError) return { content: `The ${definition.name} subagent could not start: ${error.reason}`, isError: true };
          throw error;
        }
      }
      if (!handle) return finishedResult(runner, (await runner.store.getRun(id))!, agent.type, ctx);
      const outcome = await follow(handle, ctx.signal);
      return resultOfOutcome(outcome, agent.type, ctx, () => runner.handle(parent.record.id)?.run.suspend(`its ${agent.type} subagent (${id}) waits for an answer`));
    } finally {
      options.relays.delete(id);
    }
  };
}

/** Resumes the subagent here, or — while another live process drives it — waits for it to finish. */
async function resumeOrWait(runner: DurableRunner, id: string, signal: AbortSignal): Promise<DurableRunHandle | undefined> {
  for (;;) {
    try {
      return await runner.resume(id);
    } catch (error) {
      if (!(error instanceof RunBusyError)) {
        const record = await runner.store.getRun(id);
        if (record && FINISHED_STATUSES.includes(record.status)) return undefined;
        throw error;
      }
    }
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('the run was stopped');
    await new Promise((r) => setTimeout(r, 100));
    const record = await runner.store.getRun(id);
    if (record && FINISHED_STATUSES.includes(record.status)) return undefined;
  }
}

/**
 * Waits for the subagent; the parent's stop reaches it: a cancel (or timeout, failure) cancels it,
 * a suspension releases it too (it resumes when the parent's Task call runs again).
 */
async function follow(handle: DurableRunHandle, signal: AbortSignal): Promise<DurableOutcome> {
  if (!signal.aborted) {
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const first = await Promise.race([handle.outcome.then(() => 'done' as const), stopped.then(() => 'stopped' as const)]);
    signal.removeEventListener('abort', onAbort!);
    if (first === 'done') return handle.outcome;
  }
  const reason = signal.reason as { kind?: string; reason?: string } | undefined;
  if (reason?.kind === 'suspend') handle.run.suspend('the run that started it was released');
  else handle.run.cancel(`the run that started it stopped (${reason?.kind ?? 'cancelled'})`);
  return handle.outcome;
}

function resultOfOutcome(outcome: DurableOutcome, type: string, ctx: ToolContext, suspendParent: () => void): ToolResult {
  ctx.addUsage?.(outcome.usage);
  if (outcome.status === 'completed' || outcome.status === 'max_steps') {
    const note = outcome.status === 'max_steps' ? `\n(The ${type} subagent stopped at its step limit before it finished.)` : '';
    return { content: (outcome.finalText.trim() || `The ${type} subagent finished without a final message.`) + note, data: { runId: outcome.runId, status: outcome.status, usage: outcome.usage } };
  }
  if (outcome.status === 'suspended' || outcome.leaseLost) {
    // The subagent waits for a person and nobody is here (or another process took it over): the
    // parent is released too, and its Task call re-attaches when the parent is resumed.
    if (!ctx.signal.aborted) suspendParent();
    return { content: `The ${type} subagent is waiting (${outcome.runId}).`, isError: true };
  }
  if (outcome.status === 'cancelled') return { content: `The ${type} subagent was cancelled.`, isError: true };
  return { content: `The ${type} subagent failed: ${outcome.error?.message ?? 'unknown error'} (${outcome.error?.code ?? 'failed'}).`, isError: true };
}

/** A finished subagent found again after a restart: its stored outcome, its usage from its last checkpoint. */
async function finishedResult(runner: DurableRunner, record: RunRecord, type: string, ctx: ToolContext): Promise<ToolResult> {
  const usage = (await runner.store.loadCheckpoint(record.id))?.checkpoint.state['usage'] as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
  if (typeof usage?.inputTokens === 'number' && typeof usage.outputTokens === 'number') ctx.addUsage?.({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens });
  return resultOfRecord(record, type);
}

/** A subagent that had already finished: its stored outcome. */
function resultOfRecord(record: RunRecord, type: string): ToolResult {
  if (record.status === 'completed' || record.status === 'max_steps') return { content: record.finalText?.trim() || `The ${type} subagent finished without a final message.`, data: { runId: record.id, status: record.status } };
  if (record.status === 'cancelled') return { content: `The ${type} subagent was cancelled.`, isError: true };
  return { content: `The ${type} subagent failed: ${record.error?.message ?? 'unknown error'} (${record.error?.code ?? record.status}).`, isError: true };
}
