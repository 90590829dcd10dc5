import type { Authorization } from '../../loop/authorize.js';
import type { AgentToolCall, RunWorker, WorkerContext } from '../../loop/worker.js';
import { insideFolders } from '../acp/folders.js';
import { AgentProcess } from '../agent-process.js';
import { AgentInterruptedError, AgentProcessError } from '../errors.js';
import { withoutExactShellWrapper } from '../../permission/index.js';
import { commandLine, judgedCommand } from '../judged-command.js';
import { unsandboxedCodexOverrides } from './launch.js';
import type { AgentWorkerOptions } from '../workers.js';

type Id = string | number;
interface Message {
  id?: Id;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code?: number; message?: string };
}

/** Codex's answers to an approval request. */
type Decision = 'accept' | 'acceptForSession' | 'decline' | 'cancel';

/** Nested exact wrappers (`/bin/bash -lc "sh -c 'ls'"`) are looked through this many layers deep, no more. */
const MAX_WRAPPERS = 4;

export interface CodexWorkerOptions extends AgentWorkerOptions {
  /**
   * Measurement (bench/agents.ts): how long Sage took to answer one approval request, from reading
   * its line to writing the answer (the gate, and the person when asked).
   */
  onAnswered?: (method: string, ms: number) => void;
}

/**
 * The script an agent's command line runs, without the exact shell wrappers around it (`/bin/bash
 * -lc '…'`, `sh -c '…'`, `zsh -lc '…'`, nested): what Sage judges for risk and allow rules and shows
 * the person. Any other form (an option, a word after the script, a second command) is kept whole.
 */
export async function unwrappedScript(command: string): Promise<string> {
  let line = command;
  for (let layer = 0; layer < MAX_WRAPPERS; layer++) {
    const inner = await withoutExactShellWrapper(line).catch(() => line);
    if (inner === line) return line;
    line = inner;
  }
  return line;
}

/**
 * OpenAI Codex as a run's worker, over `codex app-server` (JSON-RPC 2.0 over stdio, one object per
 * line, no "jsonrpc" field). Its approval requests —
 * `item/commandExecution/requestApproval` (a command) and `item/fileChange/requestApproval` (the
 * files of a change, announced by `item/started`) — go through Sage's gate and people: allow →
 * `accept`, or `acceptForSession` when the person chose "always"; deny → `decline`; a stopping run →
 * `cancel`; a command in a folder outside the session's → `decline`, unasked; an answer that edited
 * the call → `decline` (Codex takes no changed command or file: it would run the original). Server
 * requests Sage does not handle are answered with an error, never left pending (Codex would wait
 * forever). Codex runs with approvals on (`approvalPolicy: "untrusted"`), so it asks before anything
 * not on its own read-only list; what it runs unasked is recorded as ungated. Inside Sage's sandbox
 * its own one is off (`danger-full-access`): Sage's confines it, and Codex's needs a helper it can
 * only make outside temporary folders.
 */
export function codexWorker(options: CodexWorkerOptions): RunWorker {
  return (ctx) => {
    if (ctx.resumed) return Promise.reject(new AgentInterruptedError(options.name, ctx.agentSession?.sessionId, ctx.runId));
    return new CodexSession(ctx, options).run();
  };
}

class CodexSession {
  private readonly process: AgentProcess;
  private readonly pending = new Map<Id, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  /** File changes announced by item/started, by item id: what a fileChange approval is about. */
  private readonly changes = new Map<string, Array<{ path: string; diff?: string }>>();
  /** What each approved or refused item was judged as, by item id: its record when Codex reports it done. */
  private readonly judged = new Map<string, { calls: AgentToolCall[]; authorization?: Authorization }>();
  /** Commands Codex runs unasked, by item id, when it announces them: what they are recorded as. */
  private readonly started = new Map<string, number>();
  private nextId = 0;
  private threadId: string | undefined;
  private turnId: string | undefined;
  private text = '';
  private turnDone!: (status: string) => void;
  private failed!: (error: unknown) => void;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly options: CodexWorkerOptions,
  ) {
    this.process = new AgentProcess(options.command, { cwd: ctx.cwd, env: options.env, onLine: (line) => this.onLine(line) });
  }

  async run(): Promise<{ finalText: string }> {
    const turn = new Promise<string>((resolve, reject) => {
      this.turnDone = resolve;
      this.failed = reject;
    });
    // An exit also fails the requests Codex will never answer (it can end during `initialize`).
    const ended = (error: unknown) => {
      this.failed(error);
      for (const waiter of this.pending.values()) waiter.reject(error instanceof Error ? error : new AgentProcessError(String(error)));
      this.pending.clear();
    };
    this.process.exited.then(
      ({ code, signal }) => ended(new AgentProcessError(`Codex ended (${signal ?? `exit code ${code}`}) before its turn completed${this.process.stderr ? `: ${this.process.stderr.split('\n').slice(-3).join(' ')}` : ''}`)),
      ended,
    );
    turn.catch(() => {});
    const onAbort = () => {
      if (this.threadId && this.turnId) void this.request('turn/interrupt', { threadId: this.threadId, turnId: this.turnId }).catch(() => {});
      this.failed(this.ctx.signal.reason ?? new Error('stopped'));
    };
    this.ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await this.request('initialize', { clientInfo: { name: 'sage', version: '1' } });
      this.notify('initialized', {});
      // Sandboxed, Codex reads Sage's config.toml (launch.ts); outside, its own, whose MCP servers are turned off.
      const config = this.options.sandboxed ? {} : unsandboxedCodexOverrides(this.options.env, this.ctx.cwd);
      const threadParams = {
        cwd: this.ctx.cwd,
        approvalPolicy: 'untrusted',
        ...(this.options.sandboxed ? { sandbox: 'danger-full-access' } : {}),
        ...(Object.keys(config).length ? { config } : {}),
      };
      const started = (await (this.options.resumeSession
        ? this.request(this.options.fork ? 'thread/fork' : 'thread/resume', { threadId: this.options.resumeSession, ...threadParams })
        : this.request('thread/start', threadParams))) as { thread?: { id?: string } };
      const threadId = started.thread?.id;
      if (!threadId) throw new AgentProcessError('Codex started no thread (thread/start answered without thread.id).');
      this.threadId = threadId;
      this.ctx.emit('agent.session', { agentName: this.options.name, sessionId: threadId });
      await this.ctx.rememberSession({ agent: this.options.name, sessionId: threadId });
      const turnStarted = (await this.request('turn/start', { threadId, input: [{ type: 'text', text: this.ctx.task }] })) as { turn?: { id?: string } };
      this.turnId = turnStarted.turn?.id;
      const status = await turn;
      if (this.text) this.ctx.assistantText(this.text);
      if (status === 'failed') throw new AgentProcessError('Codex reported its turn failed.');
      return { finalText: this.text };
    } finally {
      this.ctx.signal.removeEventListener('abort', onAbort);
      this.process.endInput();
      await this.process.stop(500);
    }
  }

  private request(method: string, params: unknown): Promise<unknown> {
    const id = ++this.nextId;
    const answer = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.process.send({ id, method, params });
    return answer;
  }

  private notify(method: string, params: unknown): void {
    this.process.send({ method, params });
  }

  private onLine(line: string): void {
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      this.ctx.emit('agent.output', { agentName: this.options.name, line: line.slice(0, 20_000) });
      return;
    }
    if (message.method === undefined && message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiter?.reject(new AgentProcessError(`Codex refused a request: ${message.error.message ?? 'error'}`));
      else waiter?.resolve(message.result);
      return;
    }
    if (message.method !== undefined && message.id !== undefined) {
      void this.onServerRequest(message.id, message.method, message.params ?? {});
      return;
    }
    if (message.method !== undefined) this.onNotification(message.method, message.params ?? {});
  }

  private onNotification(method: string, params: Record<string, unknown>): void {
    switch (method) {
      case 'item/agentMessage/delta':
        if (typeof params.delta === 'string') this.text += params.delta;
        return;
      case 'item/started': {
        const item = params.item as { id?: string; type?: string; changes?: Array<{ path?: string; diff?: string }> } | undefined;
        if (item?.type === 'fileChange' && item.id && Array.isArray(item.changes)) {
          this.changes.set(item.id, item.changes.filter((c) => typeof c.path === 'string').map((c) => ({ path: c.path!, ...(c.diff ? { diff: c.diff } : {}) })));
        }
        if (item?.id) this.started.set(item.id, performance.now());
        return;
      }
      case 'item/completed':
        void this.recordItem(params.item as CompletedItem | undefined);
        return;
      case 'thread/tokenUsage/updated': {
        // `last` is the model request just made; `total` sums the thread, earlier runs of a follow-up included.
        const last = (params.tokenUsage as { last?: { inputTokens?: unknown; outputTokens?: unknown } } | undefined)?.last;
        if (typeof last?.inputTokens === 'number' && typeof last.outputTokens === 'number') this.ctx.addUsage({ inputTokens: last.inputTokens, outputTokens: last.outputTokens });
        return;
      }
      case 'turn/completed': {
        const turn = params.turn as { status?: string } | undefined;
        this.turnDone(turn?.status ?? 'completed');
        return;
      }
      default:
        this.ctx.emit('agent.output', { agentName: this.options.name, line: JSON.stringify({ method, params }).slice(0, 20_000) });
    }
  }

  private async onServerRequest(id: Id, method: string, params: Record<string, unknown>): Promise<void> {
    const started = performance.now();
    await this.answerServerRequest(id, method, params);
    this.options.onAnswered?.(method, performance.now() - started);
  }

  private async answerServerRequest(id: Id, method: string, params: Record<string, unknown>): Promise<void> {
    const calls = await this.callsOf(method, params);
    if (!calls) {
      this.process.send({ id, error: { code: -32601, message: `Sage does not handle ${method}` } });
      return;
    }
    if (calls === 'outside') {
      // A command in a folder outside the session's is refused, never asked.
      this.process.send({ id, result: { decision: 'decline' satisfies Decision } });
      return;
    }
    try {
      let decision: Decision = 'accept';
      let last: Authorization | undefined;
      // Every file of a change must pass: one denied file declines the change.
      for (const call of calls) {
        const authorization = await this.ctx.authorize(call);
        last = authorization;
        if (!authorization.allowed || edited(call, authorization)) {
          decision = 'decline';
          break;
        }
        // "Always" (for this run or beyond): Codex need not ask again for it in this session.
        if (authorization.remember && authorization.remember !== 'once') decision = 'acceptForSession';
      }
      const itemId = typeof params.itemId === 'string' ? params.itemId : undefined;
      if (itemId) this.judged.set(itemId, { calls, ...(last ? { authorization: last } : {}) });
      this.process.send({ id, result: { decision } });
    } catch {
      // The run is stopping: Codex is told to cancel, never left waiting.
      this.process.send({ id, result: { decision: 'cancel' satisfies Decision } });
    }
  }

  /**
   * The Sage calls an approval request is about; undefined for a request Sage does not handle,
   * `outside` for a command whose folder is outside the session's. A command's folder is part of
   * it: another folder inside is judged (and shown) as `cd DIR && command`.
   */
  private async callsOf(method: string, params: Record<string, unknown>): Promise<AgentToolCall[] | 'outside' | undefined> {
    const itemId = typeof params.itemId === 'string' ? params.itemId : `item_${this.nextId}`;
    if (method === 'item/commandExecution/requestApproval') {
      const sent = typeof params.command === 'string' ? params.command : Array.isArray(params.command) ? commandLine(params.command.map(String)) : '';
      // Codex wraps every command in `/bin/bash -lc '…'`: the script its model wrote is what is judged and shown.
      const line = await unwrappedScript(sent);
      const cwd = typeof params.cwd === 'string' ? params.cwd : this.ctx.cwd;
      if (!insideFolders(cwd, [this.ctx.cwd, ...(this.options.additionalDirectories ?? [])])) return 'outside';
      return [{ id: itemId, name: 'Bash', input: { command: judgedCommand(line, { cwd, sessionCwd: this.ctx.cwd }) } }];
    }
    if (method === 'item/fileChange/requestApproval') {
      const changes = this.changes.get(itemId);
      if (!changes?.length) return [{ id: itemId, name: 'codex:fileChange', input: { reason: params.reason ?? '', grantRoot: params.grantRoot ?? null } }];
      return changes.map((c, i) => ({ id: changes.length === 1 ? itemId : `${itemId}:${i}`, name: 'Write', input: { file_path: c.path, ...(c.diff ? { content: c.diff } : {}) } }));
    }
    return undefined;
  }

  /**
   * A command or file change Codex reports done, in the run's tool history: with the gate's decision
   * when it asked about it, else as Codex's own ungated call (a read-only command it ran unasked).
   */
  private async recordItem(item: CompletedItem | undefined): Promise<void> {
    if (item?.type === 'mcpToolCall' && item.id) return this.recordMcpCall(item);
    if (!item?.id || (item.type !== 'commandExecution' && item.type !== 'fileChange')) return;
    const startedAt = this.started.get(item.id);
    this.started.delete(item.id);
    const durationMs = typeof item.durationMs === 'number' ? item.durationMs : startedAt === undefined ? 0 : performance.now() - startedAt;
    const isError = item.status !== 'completed' || (typeof item.exitCode === 'number' && item.exitCode !== 0);
    const judged = this.judged.get(item.id);
    this.judged.delete(item.id);
    // Refused before the gate decided it (a folder outside the session's): it never ran.
    if (item.status === 'declined' && !judged?.authorization) return;
    let calls = judged?.calls;
    if (!calls && item.type === 'commandExecution') {
      const line = await unwrappedScript(item.command ?? '');
      const cwd = item.cwd ?? this.ctx.cwd;
      calls = [{ id: item.id, name: 'Bash', input: { command: judgedCommand(line, { cwd, sessionCwd: this.ctx.cwd }) } }];
    }
    if (!calls && item.type === 'fileChange') {
      calls = (item.changes ?? []).filter((c) => typeof c.path === 'string').map((c, i, all) => ({ id: all.length === 1 ? item.id! : `${item.id}:${i}`, name: 'Write', input: { file_path: c.path } }));
    }
    const content = item.type === 'commandExecution' ? (item.aggregatedOutput ?? '') : `${item.status ?? 'completed'}: ${(item.changes ?? []).map((c) => c.path).join(', ')}`;
    for (const call of calls ?? []) this.ctx.toolFinished(call, { content: content.slice(0, 100_000), isError, durationMs }, judged?.authorization);
  }

  /**
   * An MCP tool call Codex made: Codex 0.171.0 calls its MCP servers' tools without an approval
   * request (read-only or not), so Sage gives it none and its config none; one that still happens
   * (a future config source) is recorded as Codex's own, ungated.
   */
  private recordMcpCall(item: CompletedItem): void {
    this.started.delete(item.id!);
    const call: AgentToolCall = { id: item.id!, name: `mcp__${item.server ?? 'unknown'}__${item.tool ?? 'unknown'}`, input: item.arguments ?? {} };
    const text = (item.result?.content ?? []).map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n');
    const isError = item.status !== 'completed' || Boolean(item.error);
    this.ctx.toolFinished(call, { content: (isError ? JSON.stringify(item.error ?? item.status) : text).slice(0, 100_000), isError, durationMs: item.durationMs ?? 0 });
  }
}

interface CompletedItem {
  id?: string;
  server?: string;
  tool?: string;
  arguments?: unknown;
  result?: { content?: Array<{ text?: unknown }> } | null;
  error?: unknown;
  type?: string;
  status?: string;
  command?: string;
  cwd?: string;
  aggregatedOutput?: string | null;
  exitCode?: number | null;
  durationMs?: number | null;
  changes?: Array<{ path?: string }>;
}

/** The person changed the call before approving it: Codex would still run its own. */
function edited(call: AgentToolCall, authorization: Authorization & { allowed: true }): boolean {
  const asked = call.input as Record<string, unknown>;
  const approved = (authorization.input ?? {}) as Record<string, unknown>;
  return Object.keys(asked).some((key) => JSON.stringify(approved[key]) !== JSON.stringify(asked[key]));
}
