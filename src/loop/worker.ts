import { z } from 'zod';
import type { RunEventData, RunEventType } from '../events/index.js';
import type { Message, TokenUsage } from '../model/types.js';
import type { InteractionDraft, InteractionOutcome, PermissionSuggestion } from '../interaction/index.js';
import type { DeniedPath, PermissionDecision } from '../permission/types.js';
import type { Tool } from '../tool/types.js';
import { authorize, decide, decisionData, type Authorization } from './authorize.js';
import { STATES } from './lifecycle.js';
import type { ToolHistoryEntry } from './outcome.js';
import type { RunContext } from './run-context.js';

/**
 * What a run's worker sees when something other than Sage's own loop does the work (an external
 * coding agent such as Claude Code): the task, the run's gate and people, its event stream. The
 * worker's tool calls run inside the agent; each one the agent is about to make is passed through
 * `authorize`, which is the very path the loop's own calls take (gate, ask, edit-then-allow,
 * remembered answers, audit), so a deny rule stops an agent's call exactly as it stops Sage's.
 */
export interface WorkerContext {
  readonly runId: string;
  readonly task: string;
  readonly cwd: string;
  /** Aborted on cancel, suspension or the execution timeout: stop the agent. */
  readonly signal: AbortSignal;
  /** Set when this run is being resumed from the store (its process had stopped). */
  readonly resumed: boolean;
  /** What the worker kept of its agent (its session id) in an earlier incarnation, if anything. */
  readonly agentSession: LoopAgentSession | undefined;
  emit<T extends RunEventType>(type: T, data: RunEventData<T>): void;
  /** Passes one call of the agent through the run's gate and, when it asks, a person. */
  authorize(call: AgentToolCall): Promise<Authorization>;
  /**
   * The gate's decision alone, nobody asked (an agent's pre-tool hook: allow and deny are final and
   * recorded as events; for an ask the agent comes back with a permission request → `authorize`).
   */
  decide(call: AgentToolCall): Promise<PermissionDecision>;
  /** Asks a person something that is not a tool call (an agent's plan to approve). */
  interact(draft: InteractionDraft): Promise<InteractionOutcome>;
  /**
   * The agent's call ran (inside the agent): recorded in the run's tool history and events. A call
   * the gate decided (through `decide` or `authorize`, by its id) is recorded with that decision; one
   * it never saw is recorded as the agent's own, ungated call (`ungated: true`), never as allowed.
   */
  toolFinished(call: AgentToolCall, result: { content: string; isError: boolean; durationMs: number }, authorization?: Authorization): void;
  /** The agent said something: a message in the run's conversation (and a `message.completed` event). */
  assistantText(text: string, usage?: TokenUsage): void;
  addUsage(usage: TokenUsage): void;
  /** Keeps the agent's session id with the run (checkpointed), so a follow-up can continue it. */
  rememberSession(session: LoopAgentSession): Promise<void>;
  /** Sage's own model-and-tools loop, for a worker that wraps it (the action chain around Sage's loop). */
  runLoop(): Promise<string>;
  /** The chain steps (setup, cleanup) an earlier incarnation finished: a resumed run does not repeat them. */
  readonly chainDone: readonly string[];
  markChainDone(step: string): Promise<void>;
  /** The permission mode of the run's gate, and a listener for changes made during the run. */
  permissionMode(): string | undefined;
  onPermissionMode(listener: (mode: string) => void): void;
  /** The paths the gate's Read deny rules name, to hide them from the agent's own process (src/sandbox). */
  readDenyPaths(): DeniedPath[];
}

export interface AgentToolCall {
  id: string;
  name: string;
  input: unknown;
  /** Rules the agent itself suggests for "always" (Claude Code's permission_suggestions). */
  suggestions?: PermissionSuggestion[];
}

/** The agent behind a run and its own session id, kept in the loop state (see LoopState.agentSession). */
export interface LoopAgentSession {
  agent: string;
  sessionId: string;
}

/** Does the work of a run instead of the model-and-tools loop; returns the final text. */
export type RunWorker = (ctx: WorkerContext) => Promise<{ finalText: string }>;

/**
 * The tools an agent calls may not be Sage's: a call of an unknown name gets a stand-in with the
 * gate's defaults (not read-only, medium risk, any input), so it is asked about, never waved through.
 * A known name keeps Sage's traits (Bash is judged by its shell classifier, Read by its path) with an
 * input schema that keeps the agent's own fields.
 */
function standIn(ctx: RunContext, name: string): Tool {
  const existing = ctx.registry.get(name);
  if (existing?.inputSchema instanceof z.ZodObject) {
    const loose: Tool = { ...existing, inputSchema: (existing.inputSchema as z.ZodObject).loose(), execute: () => Promise.reject(new Error(`${name} runs inside the agent`)) };
    return loose;
  }
  if (existing) return existing;
  const tool: Tool = {
    name,
    description: `${name} (a tool of the external agent)`,
    inputSchema: z.unknown(),
    risk: 'MEDIUM',
    readOnly: false,
    execute: () => Promise.reject(new Error(`${name} runs inside the agent`)),
  };
  ctx.registry.register(tool);
  return tool;
}

/** Runs a worker inside the loop's lifecycle: the same events, interactions, outcome and stop handling. */
export async function runWorker(ctx: RunContext, worker: RunWorker, runLoop: () => Promise<string>): Promise<string> {
  const listeners: ((mode: string) => void)[] = [];
  const gate = ctx.gate as { setMode?: (mode: string) => void; readonly mode?: string };
  if (gate.setMode) {
    const setMode = gate.setMode.bind(gate);
    gate.setMode = (mode: string) => {
      setMode(mode);
      for (const listener of listeners) listener(mode);
    };
  }
  const state = ctx.state;
  /** What the gate decided for each call of the agent, by id: a call reported without one ran ungated. */
  const decided = new Map<string, ToolHistoryEntry['decision']>();
  const context: WorkerContext = {
    runId: ctx.runId,
    task: ctx.task,
    cwd: ctx.gateContext.cwd,
    signal: ctx.signal,
    resumed: ctx.options.resumeFrom !== undefined,
    agentSession: state.agentSession,
    emit: (type, data) => ctx.emit(type, data),
    async authorize(call) {
      ctx.throwIfStopped();
      ctx.enter(STATES.executingTools);
      const tool = standIn(ctx, call.name);
      ctx.emit('tool.requested', { toolCallId: call.id, toolName: call.name, input: call.input });
      const gated = call.suggestions?.length ? withSuggestions(ctx, call.suggestions) : undefined;
      try {
        const result = await authorize(ctx, { id: call.id, name: call.name, input: call.input }, tool, call.input, undefined);
        ctx.emit('permission.decided', decisionData({ id: call.id, name: call.name, input: call.input }, result.decision.behavior, result.decision));
        decided.set(call.id, historyDecision(result));
        if (result.allowed) ctx.emit('tool.started', { toolCallId: call.id, toolName: call.name, input: result.input });
        return result;
      } finally {
        gated?.restore();
      }
    },
    async decide(call) {
      ctx.throwIfStopped();
      const tool = standIn(ctx, call.name);
      const gateCall = { toolCallId: call.id, toolName: call.name, input: call.input, tool: ctx.registry.gateInfoOf(tool.name)! };
      const decision = await decide(ctx, gateCall);
      if (decision.behavior !== 'ask') {
        const toolCall = { id: call.id, name: call.name, input: call.input };
        ctx.emit('tool.requested', { toolCallId: call.id, toolName: call.name, input: call.input });
        ctx.emit('permission.decided', decisionData(toolCall, decision.behavior, decision));
        decided.set(call.id, { behavior: decision.behavior, reason: decision.reason, source: decision.source, ...(decision.rule ? { rule: decision.rule } : {}) });
        if (decision.behavior === 'allow') ctx.emit('tool.started', { toolCallId: call.id, toolName: call.name, input: call.input });
      }
      return decision;
    },
    interact: (draft) => ctx.interact(draft),
    toolFinished(call, result, authorization) {
      const gated = authorization ? historyDecision(authorization) : decided.get(call.id);
      decided.delete(call.id);
      // Nobody decided this call: it is kept as the agent's own, not dressed up as an allow of the gate.
      const decision: ToolHistoryEntry['decision'] = gated ?? { behavior: 'allow', reason: 'not decided by Sage: the agent ran this call on its own, without asking', source: 'default' };
      state.toolHistory.push({ toolCallId: call.id, name: call.name, input: call.input, decision, ...(gated ? {} : { ungated: true as const }), result: { content: result.content, isError: result.isError }, durationMs: result.durationMs });
      state.stats.toolCalls++;
      ctx.emit('tool.completed', { toolCallId: call.id, toolName: call.name, isError: result.isError, content: result.content, durationMs: result.durationMs, ...(gated ? {} : { ungated: true as const }) });
    },
    assistantText(text, usage) {
      state.step++;
      state.stats.steps = state.step;
      state.stats.modelCalls++;
      const message: Message = { role: 'assistant', content: text };
      state.messages.push(message);
      // Front ends print the text from its deltas (the agent gives it whole: one delta).
      ctx.emit('message.delta', { text });
      ctx.emit('message.completed', { role: 'assistant', text, toolCalls: [], ...(usage ? { usage } : {}) });
    },
    addUsage: (usage) => ctx.addUsage(usage),
    async rememberSession(session) {
      state.agentSession = session;
      await ctx.checkpoint();
    },
    runLoop,
    get chainDone() {
      return state.chainDone ?? [];
    },
    async markChainDone(step) {
      state.chainDone = [...(state.chainDone ?? []), step];
      await ctx.checkpoint();
    },
    permissionMode: () => gate.mode,
    onPermissionMode: (listener) => void listeners.push(listener),
    readDenyPaths: () => ctx.gate.readDenyPaths?.(ctx.gateContext.cwd) ?? [],
  };
  const { finalText } = await worker(context);
  ctx.throwIfStopped();
  return finalText;
}

function historyDecision(authorization: Authorization): ToolHistoryEntry['decision'] {
  const d = authorization.decision;
  return { behavior: d.behavior, reason: d.reason, source: d.source, ...(d.rule ? { rule: d.rule } : {}), ...(authorization.answeredBy ? { answeredBy: authorization.answeredBy } : {}) };
}

/** The agent's own rule suggestions join the gate's for this one decision (dedup, the gate's first). */
function withSuggestions(ctx: RunContext, extra: readonly PermissionSuggestion[]): { restore(): void } {
  const gate = ctx.gate as { decide: RunContext['gate']['decide'] };
  const decide = gate.decide;
  gate.decide = ((call, context) => {
    const add = (d: PermissionDecision): PermissionDecision => {
      if (d.behavior !== 'ask') return d;
      const own = d.suggestions ?? [];
      return { ...d, suggestions: [...own, ...extra.filter((e) => !own.some((o) => o.rule === e.rule && o.behavior === e.behavior))] };
    };
    const decided = decide.call(ctx.gate, call, context);
    return decided instanceof Promise ? decided.then(add) : add(decided as PermissionDecision);
  }) as RunContext['gate']['decide'];
  return { restore: () => void (gate.decide = decide) };
}
