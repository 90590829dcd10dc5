import { randomUUID } from 'node:crypto';
import type { PermissionSuggestion } from '../../interaction/index.js';
import type { AgentToolCall, RunWorker, WorkerContext } from '../../loop/worker.js';
import { AgentProcess } from '../agent-process.js';
import type { McpServers } from '../../mcp/config.js';
import { AgentInterruptedError, AgentProcessError } from '../errors.js';
import { claudeCodeLaunch } from './launch.js';
import { parseLine, type CanUseTool, type ContentBlock, type HookCallback } from './protocol.js';

export interface ClaudeCodeWorkerOptions {
  /** The preset's name, for messages and the session event. */
  name?: string;
  /** The program and its arguments (the preset's `claude`, or the settings' command). */
  command: readonly string[];
  /** The curated environment (src/agents/environment.ts). */
  env: Record<string, string>;
  /** A follow-up: continue this Claude Code session (`--resume`), or fork it (`--fork-session`). */
  resumeSession?: string;
  fork?: boolean;
  /** Whether Sage trusts the run's folder (the project's Claude Code settings are read only then); untrusted when unsaid. */
  trusted?: boolean;
  /** The MCP servers Sage would start for the run (agent-mcp.ts): the only ones Claude Code starts. */
  mcpServers?: McpServers;
  /** How long to wait for the agent to stop after an interrupt before its process group is killed. */
  stopGraceMs?: number;
  /**
   * Measurement (bench/agents.ts): how long Sage took to answer one of the agent's control requests,
   * from reading its line to writing the answer (the gate, and the person when asked).
   */
  onAnswered?: (subtype: string, ms: number) => void;
}

/** The callback id of the PreToolUse hook that sends every tool call to Sage's gate. */
const GATE_HOOK = 'sage_gate';

/** The words Claude Code itself uses when a person rejects a call, so the model reads it as it expects. */
const USER_REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";

/**
 * Claude Code as a run's worker, over its stream-json control protocol (see
 * ../shared/research/claude-code-protocol.md). `initialize` registers a PreToolUse hook on every
 * tool, so each call Claude Code is about to make — including those it would allow on its own, like
 * a Read — comes to Sage's gate first: allow and deny answer the hook; an ask makes the hook answer
 * "ask", Claude Code then sends `can_use_tool` with its rule suggestions, and that becomes a Sage
 * interaction answered anywhere (terminal, web page, chat, `sage respond`). The answer goes back as
 * the control response: allow with the (possibly edited) input, or deny with the person's words.
 */
export function claudeCodeWorker(options: ClaudeCodeWorkerOptions): RunWorker {
  const name = options.name ?? 'claude-code';
  return (ctx) => {
    // The process of an earlier incarnation is gone with it; its session is kept for --continue.
    if (ctx.resumed) return Promise.reject(new AgentInterruptedError(name, ctx.agentSession?.sessionId, ctx.runId));
    return new ClaudeCodeSession(ctx, options, name).run();
  };
}

/** Sage's permission mode as Claude Code's: only plan changes how Claude Code works; Sage's gate decides every call. */
function claudeMode(mode: string | undefined): string {
  return mode === 'plan' ? 'plan' : 'default';
}

class ClaudeCodeSession {
  private readonly process: AgentProcess;
  private readonly calls = new Map<string, { call: AgentToolCall; startedAt: number; authorization?: Awaited<ReturnType<WorkerContext['authorize']>> }>();
  private readonly pending = new Map<string, (response: { ok: boolean; error?: string }) => void>();
  /** Control requests Claude Code withdrew (control_cancel_request): their answers are not sent. */
  private readonly withdrawn = new Set<string>();
  private sessionId: string | undefined;
  private finalText = '';
  private settled = false;
  private resolve!: (value: { finalText: string }) => void;
  private reject!: (error: unknown) => void;
  private interrupted = false;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly options: ClaudeCodeWorkerOptions,
    private readonly name: string,
  ) {
    const launch = claudeCodeLaunch({
      trusted: options.trusted === true,
      mcpServers: options.mcpServers ?? {},
      permissionMode: claudeMode(ctx.permissionMode()),
      ...(options.resumeSession ? { resumeSession: options.resumeSession, fork: options.fork === true } : {}),
    });
    try {
      this.process = new AgentProcess([...options.command, ...launch.args], { cwd: ctx.cwd, env: options.env, onLine: (line) => this.onLine(line) });
    } catch (error) {
      launch.dispose();
      throw error;
    }
    // Claude Code reads its MCP config at start; the file (it may hold tokens) goes when the process does.
    void this.process.exited.finally(launch.dispose).catch(() => {});
  }

  run(): Promise<{ finalText: string }> {
    const done = new Promise<{ finalText: string }>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const onAbort = () => void this.interrupt();
    this.ctx.signal.addEventListener('abort', onAbort, { once: true });
    this.ctx.onPermissionMode((mode) => this.control({ subtype: 'set_permission_mode', mode: claudeMode(mode) }));
    this.process.exited.then(
      ({ code, signal }) => {
        if (this.settled) return;
        if (this.ctx.signal.aborted) return this.finish(undefined, this.ctx.signal.reason ?? new Error('stopped'));
        const why = this.process.stderr ? `: ${this.process.stderr.split('\n').slice(-3).join(' ')}` : '';
        this.finish(undefined, new AgentProcessError(`Claude Code ended (${signal ?? `exit code ${code}`}) before it gave a result${why}`));
      },
      (error: unknown) => this.finish(undefined, error),
    );
    // Every tool, whatever Claude Code would decide on its own, is first Sage's to decide.
    this.control({ subtype: 'initialize', hooks: { PreToolUse: [{ matcher: '.*', hookCallbackIds: [GATE_HOOK], timeout: 86_400 }] } });
    this.process.send({ type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user', content: [{ type: 'text', text: this.ctx.task }] } });
    return done.finally(() => {
      this.ctx.signal.removeEventListener('abort', onAbort);
      void this.process.stop(this.options.stopGraceMs);
    });
  }

  private finish(value: { finalText: string } | undefined, error?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (error !== undefined) this.reject(error);
    else this.resolve(value!);
  }

  /** Sage's cancel (or a suspension): interrupt the turn, then stop the process. Pending asks are closed by the run. */
  private async interrupt(): Promise<void> {
    if (this.interrupted) return;
    this.interrupted = true;
    const answered = this.control({ subtype: 'interrupt' });
    const timeout = new Promise((resolve) => setTimeout(resolve, 1_000).unref());
    await Promise.race([answered, timeout]);
    this.process.endInput();
    await this.process.stop(this.options.stopGraceMs);
    this.finish(undefined, this.ctx.signal.reason ?? new Error('stopped'));
  }

  private control(request: Record<string, unknown>): Promise<{ ok: boolean; error?: string }> {
    const requestId = `sage_${randomUUID()}`;
    const answered = new Promise<{ ok: boolean; error?: string }>((resolve) => this.pending.set(requestId, resolve));
    this.process.send({ type: 'control_request', request_id: requestId, request });
    return answered;
  }

  private respond(requestId: string, response: Record<string, unknown>): void {
    if (this.withdrawn.delete(requestId)) return;
    this.process.send({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
  }

  private respondError(requestId: string, error: string): void {
    if (this.withdrawn.delete(requestId)) return;
    this.process.send({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error } });
  }

  private onLine(line: string): void {
    if (line.trim() === '' || this.settled) return;
    const message = parseLine(line);
    switch (message.kind) {
      case 'init':
        this.sessionId = message.sessionId;
        this.ctx.emit('agent.session', { agentName: this.name, sessionId: message.sessionId });
        void this.ctx.rememberSession({ agent: this.name, sessionId: message.sessionId }).catch(() => {});
        return;
      case 'assistant':
        this.onAssistant(message.content, message.usage);
        return;
      case 'user':
        this.onToolResults(message.content);
        return;
      case 'result':
        this.onResult(message);
        return;
      case 'control_request':
        this.onControlRequest(message.requestId, message.request);
        return;
      case 'control_response':
        this.pending.get(message.requestId)?.({ ok: message.ok, ...(message.error ? { error: message.error } : {}) });
        this.pending.delete(message.requestId);
        return;
      case 'control_cancel_request':
        this.withdrawn.add(message.requestId);
        return;
      case 'other':
        // Unknown to Sage (a newer message type, a partial stream event): kept in the log as it came.
        this.ctx.emit('agent.output', { agentName: this.name, line: line.length > 20_000 ? `${line.slice(0, 20_000)}…` : line });
        return;
    }
  }

  private onAssistant(content: readonly ContentBlock[], usage: { inputTokens: number; outputTokens: number } | undefined): void {
    const text = content.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : [])).join('');
    for (const block of content) {
      if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
        const known = this.calls.get(block.id);
        if (!known) this.calls.set(block.id, { call: { id: block.id, name: block.name, input: block.input ?? {} }, startedAt: Date.now() });
      }
    }
    if (text !== '') this.ctx.assistantText(text, usage);
    if (usage) this.ctx.addUsage(usage);
  }

  private onToolResults(content: readonly ContentBlock[]): void {
    for (const block of content) {
      if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
      const entry = this.calls.get(block.tool_use_id);
      if (!entry) continue;
      this.calls.delete(block.tool_use_id);
      this.ctx.toolFinished(entry.call, { content: resultText(block.content), isError: block.is_error === true, durationMs: Date.now() - entry.startedAt }, entry.authorization);
    }
  }

  private onResult(message: Extract<ReturnType<typeof parseLine>, { kind: 'result' }>): void {
    if (message.sessionId) this.sessionId = message.sessionId;
    if (this.sessionId) this.ctx.emit('agent.session', { agentName: this.name, sessionId: this.sessionId, ...(message.costUsd !== undefined ? { costUsd: message.costUsd } : {}) });
    this.finalText = message.result ?? this.finalText;
    // One task per run: no more input, so Claude Code exits once it has answered.
    this.process.endInput();
    if (this.interrupted) return;
    if (message.isError) {
      this.finish(undefined, new AgentProcessError(`Claude Code ended its turn with ${message.subtype}${message.result ? `: ${message.result}` : ''}`));
      return;
    }
    this.finish({ finalText: this.finalText });
  }

  private onControlRequest(requestId: string, request: Record<string, unknown>): void {
    const subtype = request.subtype;
    const started = performance.now();
    const handled =
      subtype === 'hook_callback' ? this.onHook(requestId, request as unknown as HookCallback) : subtype === 'can_use_tool' ? this.onCanUseTool(requestId, request as unknown as CanUseTool) : undefined;
    if (!handled) {
      this.respondError(requestId, `Sage does not handle control requests of subtype ${String(subtype)}`);
      return;
    }
    if (this.options.onAnswered) void handled.then(() => this.options.onAnswered!(String(subtype), performance.now() - started), () => {});
    handled.catch((error: unknown) => {
      // The run is stopping (cancelled, suspended) or the gate failed: never leave Claude Code waiting.
      this.respondError(requestId, error instanceof Error ? error.message : String(error));
    });
  }

  /** The PreToolUse hook: the gate alone. Allow and deny are final; an ask hands the call to can_use_tool. */
  private async onHook(requestId: string, request: HookCallback): Promise<void> {
    const input = request.input ?? {};
    const toolName = typeof input.tool_name === 'string' ? input.tool_name : undefined;
    const toolUseId = typeof input.tool_use_id === 'string' ? input.tool_use_id : typeof request.tool_use_id === 'string' ? request.tool_use_id : undefined;
    if (request.callback_id !== GATE_HOOK || !toolName || !toolUseId) {
      this.respond(requestId, {});
      return;
    }
    const call: AgentToolCall = { id: toolUseId, name: toolName, input: input.tool_input ?? {} };
    if (toolName === 'ExitPlanMode' || toolName === 'AskUserQuestion') {
      // Both are a person's to answer, whatever the rules say: let Claude Code ask, then ask here.
      this.respond(requestId, hookDecision('ask', 'a person answers this'));
      return;
    }
    this.calls.set(toolUseId, { call, startedAt: Date.now() });
    const decision = await this.ctx.decide(call);
    if (decision.behavior === 'allow') {
      this.respond(requestId, hookDecision('allow', `Sage: ${decision.reason}`, decision.updatedInput));
    } else if (decision.behavior === 'deny') {
      // Kept: Claude Code answers the denied call with a tool_result holding the reason, which ends
      // it in the run's record with the gate's deny (a denied call of Sage's own loop is recorded too).
      this.respond(requestId, hookDecision('deny', `Sage denied this call: ${decision.reason}`));
    } else {
      this.respond(requestId, hookDecision('ask', `Sage asks a person: ${decision.reason}`));
    }
  }

  /** Claude Code asks for permission: a Sage interaction, answered anywhere; the answer goes back. */
  private async onCanUseTool(requestId: string, request: CanUseTool): Promise<void> {
    const toolUseId = request.tool_use_id ?? `${requestId}`;
    const input = request.input ?? {};
    if (request.tool_name === 'ExitPlanMode') return this.onExitPlanMode(requestId, toolUseId, input);
    const call: AgentToolCall = { id: toolUseId, name: request.tool_name, input, suggestions: suggestionsOf(request.permission_suggestions) };
    const authorization = await this.ctx.authorize(call);
    const entry = this.calls.get(toolUseId) ?? { call, startedAt: Date.now() };
    if (authorization.allowed) {
      this.calls.set(toolUseId, { ...entry, call: { ...call, input: authorization.input }, authorization });
      this.respond(requestId, { behavior: 'allow', updatedInput: authorization.input, toolUseID: toolUseId });
    } else {
      this.calls.set(toolUseId, { ...entry, authorization });
      const message = authorization.rejectedByUser ? `${USER_REJECTED} ${authorization.modelText}` : authorization.modelText;
      this.respond(requestId, { behavior: 'deny', message, toolUseID: toolUseId });
    }
  }

  /** The plan is a person's to approve; approved, the run leaves plan mode in Sage and in Claude Code. */
  private async onExitPlanMode(requestId: string, toolUseId: string, input: Record<string, unknown>): Promise<void> {
    const plan = typeof input.plan === 'string' ? input.plan : JSON.stringify(input);
    const outcome = await this.ctx.interact({
      id: `${this.ctx.runId}:${toolUseId}:plan`,
      kind: 'confirm',
      title: 'Approve the plan?',
      description: plan.length > 4_000 ? `${plan.slice(0, 4_000)}…` : plan,
      toolCallId: toolUseId,
      toolName: 'ExitPlanMode',
      input,
      metadata: { purpose: 'plan-approval', agent: this.name },
    });
    if (outcome.status === 'answered' && outcome.response.confirmed) {
      this.respond(requestId, { behavior: 'allow', updatedInput: input, updatedPermissions: [{ type: 'setMode', mode: 'default', destination: 'session' }], toolUseID: toolUseId });
      return;
    }
    const reason = outcome.status === 'answered' ? (outcome.response.message ?? 'the plan was not approved') : outcome.reason;
    this.respond(requestId, { behavior: 'deny', message: `${USER_REJECTED} ${reason}`, toolUseID: toolUseId });
  }
}

function hookDecision(decision: 'allow' | 'deny' | 'ask', reason: string, updatedInput?: unknown): Record<string, unknown> {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision,
      permissionDecisionReason: reason,
      ...(updatedInput !== undefined ? { updatedInput } : {}),
    },
  };
}

/** Claude Code's `permission_suggestions` (addRules with allow) as rules a person may choose for "always". */
function suggestionsOf(raw: unknown): PermissionSuggestion[] {
  if (!Array.isArray(raw)) return [];
  const out: PermissionSuggestion[] = [];
  for (const update of raw as Array<Record<string, unknown>>) {
    if (update?.type !== 'addRules' || update.behavior !== 'allow' || !Array.isArray(update.rules)) continue;
    for (const rule of update.rules as Array<Record<string, unknown>>) {
      if (typeof rule?.toolName !== 'string') continue;
      const text = typeof rule.ruleContent === 'string' && rule.ruleContent !== '' ? `${rule.toolName}(${rule.ruleContent})` : rule.toolName;
      out.push({ type: 'addRule', toolName: rule.toolName, rule: text, behavior: 'allow', destination: 'localSettings' });
    }
  }
  return out;
}

/** A tool_result's content: a string, or text blocks. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { type?: string; text?: unknown }) => (b?.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
  return '';
}
