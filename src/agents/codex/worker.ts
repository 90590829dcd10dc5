import type { AgentToolCall, RunWorker, WorkerContext } from '../../loop/worker.js';
import { insideFolders } from '../acp/folders.js';
import { AgentProcess } from '../agent-process.js';
import { AgentInterruptedError, AgentProcessError } from '../errors.js';
import { withoutExactShellWrapper } from '../../permission/index.js';
import { commandLine, judgedCommand } from '../judged-command.js';
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

/**
 * OpenAI Codex as a run's worker, over `codex app-server` (JSON-RPC 2.0 over stdio, one object per
 * line, no "jsonrpc" field). Its approval requests —
 * `item/commandExecution/requestApproval` (a command) and `item/fileChange/requestApproval` (the
 * files of a change, announced by `item/started`) — go through Sage's gate and people: allow →
 * `accept`, or `acceptForSession` when the person chose "always"; deny → `decline`; a stopping run →
 * `cancel`; a command in a folder outside the session's → `decline`, unasked. Server requests Sage does not handle are answered with an error, never left pending
 * (Codex would wait forever). Codex runs with approvals on (`approvalPolicy: "untrusted"`), so it
 * asks before anything that is not read-only.
 */
export function codexWorker(options: AgentWorkerOptions): RunWorker {
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
  private nextId = 0;
  private threadId: string | undefined;
  private turnId: string | undefined;
  private text = '';
  private turnDone!: (status: string) => void;
  private failed!: (error: unknown) => void;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly options: AgentWorkerOptions,
  ) {
    this.process = new AgentProcess(options.command, { cwd: ctx.cwd, env: options.env, onLine: (line) => this.onLine(line) });
  }

  async run(): Promise<{ finalText: string }> {
    const turn = new Promise<string>((resolve, reject) => {
      this.turnDone = resolve;
      this.failed = reject;
    });
    this.process.exited.then(
      ({ code, signal }) => this.failed(new AgentProcessError(`Codex ended (${signal ?? `exit code ${code}`}) before its turn completed${this.process.stderr ? `: ${this.process.stderr.split('\n').slice(-3).join(' ')}` : ''}`)),
      (error: unknown) => this.failed(error),
    );
    const onAbort = () => {
      if (this.threadId && this.turnId) void this.request('turn/interrupt', { threadId: this.threadId, turnId: this.turnId }).catch(() => {});
      this.failed(this.ctx.signal.reason ?? new Error('stopped'));
    };
    this.ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await this.request('initialize', { clientInfo: { name: 'sage', version: '1' } });
      this.notify('initialized', {});
      const threadParams = { cwd: this.ctx.cwd, approvalPolicy: 'untrusted' };
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
      // Every file of a change must pass: one denied file declines the change.
      for (const call of calls) {
        const authorization = await this.ctx.authorize(call);
        if (!authorization.allowed) {
          decision = 'decline';
          break;
        }
        // "Always" (for this run or beyond): Codex need not ask again for it in this session.
        if (authorization.remember && authorization.remember !== 'once') decision = 'acceptForSession';
      }
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
      const line = await withoutExactShellWrapper(sent).catch(() => sent);
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
}
