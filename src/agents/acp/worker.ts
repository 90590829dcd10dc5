import { spawn } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { readFile, writeFile } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, PROTOCOL_VERSION, type ClientContext } from '@agentclientprotocol/sdk';
import type { Authorization } from '../../loop/authorize.js';
import type { AgentToolCall, RunWorker, WorkerContext } from '../../loop/worker.js';
import { AgentInterruptedError, AgentProcessError } from '../errors.js';
import type { AgentWorkerOptions } from '../workers.js';
import { commandLine } from '../judged-command.js';
import { killWithSage } from '../../sandbox/guardian.js';
import { insideFolders } from './folders.js';
import { acpLaunch } from './launch.js';
import { readAnswersFor, refusal as refused } from './read-answers.js';
import { planTerminal } from './terminal-request.js';
import { Terminals } from './terminals.js';

type Outcome = { outcome: { outcome: 'cancelled' } | { outcome: 'selected'; optionId: string } };
interface PermissionOption {
  optionId: string;
  kind: string;
}

/**
 * An Agent Client Protocol agent (Gemini CLI, Qwen Code, any ACP agent) as a run's worker. Its
 * `session/request_permission` goes through Sage's gate and people (the option is chosen by kind);
 * the file and shell access it asks of its client (`fs/read_text_file`, `fs/write_text_file`,
 * `terminal/*`) is served by Sage under Read, Write and Bash rules — a file outside the session's
 * folders is refused, never asked — so what the agent reads, writes and runs is Sage's to allow.
 * A call the person already approved through a permission request is not asked about again when
 * the agent then performs it; a deny rule still stops it.
 */
/** Measurement (bench/agents.ts): how long Sage took to answer one of the agent's requests. */
type OnAnswered = (method: string, ms: number) => void;

export function acpWorker(options: AgentWorkerOptions & { additionalDirectories?: readonly string[]; onAnswered?: OnAnswered }): RunWorker {
  return (ctx) => {
    if (ctx.resumed) return Promise.reject(new AgentInterruptedError(options.name, ctx.agentSession?.sessionId, ctx.runId));
    // A follow-up started without its session would look like one: refused (`sage run --continue` says so first).
    if (options.resumeSession) {
      const why = `The ${options.name} agent speaks ACP, and Sage cannot continue its session ${options.resumeSession}`;
      return Promise.reject(new AgentProcessError(`${why} (session/load is not supported yet): start a new run.`));
    }
    return runAcp(ctx, options);
  };
}

async function runAcp(ctx: WorkerContext, options: AgentWorkerOptions & { additionalDirectories?: readonly string[]; onAnswered?: OnAnswered }): Promise<{ finalText: string }> {
  const [program, ...args] = options.command;
  if (!program) throw new AgentProcessError(`The ${options.name} agent has no command to run.`);
  const folders = [ctx.cwd, ...(options.additionalDirectories ?? [])];
  const launch = acpLaunch({ preset: options.name, cwd: ctx.cwd, trusted: options.trusted === true, mcpServers: options.mcpServers ?? {} });
  const child = spawn(program, [...args, ...launch.args], { cwd: ctx.cwd, env: { ...options.env, ...launch.env }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  child.once('close', killWithSage(child.pid));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)));
  const started = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new AgentProcessError(`Could not start the ${options.name} agent (${program}): ${error.message}`, { cause: error })));
  });
  // The settings files Sage wrote (they may hold MCP tokens) go when the agent does.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve())).finally(launch.dispose);
  child.once('error', launch.dispose);
  await started;

  const terminals = new Terminals();
  /** Calls a person approved through a permission request: the agent's own fs/terminal request for it is not asked again. */
  const granted = new Set<string>();
  /** Permission requests waiting for a person: answered `cancelled` on a cancel, as ACP requires. */
  const waiting = new Set<(outcome: Outcome) => void>();
  /** The agent's calls under way, by its tool call id: each ends in the run's history when the agent reports its end. */
  const calls = new Map<string, { call: AgentToolCall; startedAt: number; authorization?: Authorization }>();
  /** Calls already recorded (a refused one ends when Sage refuses it): a later report of them is not a second call. */
  const ended = new Set<string>();
  const readAnswers = readAnswersFor(options.name);
  let over = false;
  let text = '';
  let seq = 0;

  /**
   * The gate for an agent's own fs/terminal request; a person only when it asks and nothing was
   * granted. A refused request is recorded as ended, with the refusal, as Sage's loop records a
   * denied call. Returns the input the person approved, when a person was asked (they may have
   * edited it), and `finish` to record how an allowed request ended — a no-op for one an approved
   * permission request carried, which is recorded as that call.
   */
  const gateRequest = async (call: AgentToolCall, grantKey: string): Promise<{ input?: unknown; finish: (content: string, isError: boolean) => void }> => {
    const startedAt = Date.now();
    const finish = (authorization?: Authorization) => (content: string, isError: boolean) => ctx.toolFinished(call, { content, isError, durationMs: Date.now() - startedAt }, authorization);
    const decision = await ctx.decide(call);
    if (decision.behavior === 'allow') return { finish: finish() };
    if (decision.behavior === 'deny') {
      const reason = `Sage denied this: ${decision.reason}`;
      finish()(reason, true);
      throw refused(reason);
    }
    if (granted.delete(grantKey)) return { finish: () => {} };
    const authorization = await ctx.authorize(call);
    if (!authorization.allowed) {
      finish(authorization)(authorization.modelText, true);
      throw refused(authorization.modelText);
    }
    return { input: authorization.input, finish: finish(authorization) };
  };

  /** Ends an agent's call in the run's history once (its tool.completed, counted in the run's stats). */
  const endCall = (id: string, result: { content: string; isError: boolean }): void => {
    const entry = calls.get(id);
    if (!entry || ended.has(id)) return;
    calls.delete(id);
    ended.add(id);
    ctx.toolFinished(entry.call, { ...result, durationMs: Date.now() - entry.startedAt }, entry.authorization);
  };

  const answerPermission = async (params: { toolCall: unknown; options: unknown }): Promise<Outcome> => {
    const call = callOf(params.toolCall as ToolCallLike, ++seq);
    const choices = params.options as PermissionOption[];
    const choose = (kinds: string[]) => choices.find((o) => kinds.includes(o.kind))?.optionId;
    if (ctx.signal.aborted) return { outcome: { outcome: 'cancelled' } } as Outcome;
    let cancel!: (outcome: Outcome) => void;
    const cancelled = new Promise<Outcome>((resolve) => (cancel = resolve));
    waiting.add(cancel);
    try {
      const startedAt = calls.get(call.id)?.startedAt ?? Date.now();
      const answer = ctx.authorize(call).then((authorization): Outcome => {
        // An ACP permission answer is an option, not an input: the agent would run the call it asked
        // about, not the person's edit, so an edited approval is a refusal of the agent's call.
        const edited = authorization.allowed && !isDeepStrictEqual(authorization.input, call.input);
        // Gemini CLI sends no tool_call before asking: the call is known from here on, and ends
        // with the agent's tool_call_update — or now, with the refusal, for a call it will not run.
        calls.set(call.id, { call, startedAt, authorization });
        if (!authorization.allowed) endCall(call.id, { content: authorization.modelText, isError: true });
        if (edited) endCall(call.id, { content: editedRefusal(options.name, authorization.input), isError: true });
        if (authorization.allowed && !edited) {
          const key = grantKeyOf(call);
          if (key) granted.add(key);
          const always = authorization.remember !== undefined && authorization.remember !== 'once';
          const id = (always ? choose(['allow_always']) : undefined) ?? choose(['allow_once']) ?? choose(['allow_always']);
          return id ? { outcome: { outcome: 'selected', optionId: id } } : { outcome: { outcome: 'cancelled' } };
        }
        const id = choose(['reject_once']) ?? choose(['reject_always']);
        return id ? { outcome: { outcome: 'selected', optionId: id } } : { outcome: { outcome: 'cancelled' } };
      });
      answer.catch(() => {});
      return await Promise.race([answer, cancelled]);
    } catch {
      // The run is stopping (cancelled, suspended): every pending request is answered cancelled.
      return { outcome: { outcome: 'cancelled' } } as Outcome;
    } finally {
      waiting.delete(cancel);
    }
  };

  const app = client({ name: 'sage' })
    .onRequest('session/request_permission', async ({ params }) => {
      const started = performance.now();
      try {
        return await answerPermission(params);
      } finally {
        options.onAnswered?.('session/request_permission', performance.now() - started);
      }
    })
    .onRequest('fs/read_text_file', async ({ params }) => {
      if (!insideFolders(params.path, folders)) return readAnswers.refused(`${params.path} is outside the session's folders (${folders.join(', ')}): refused.`);
      let finish: (content: string, isError: boolean) => void;
      try {
        ({ finish } = await gateRequest({ id: `acp_read_${++seq}`, name: 'Read', input: { file_path: params.path } }, `file:${params.path}`));
      } catch (error) {
        return readAnswers.refused((error as Error).message);
      }
      let content: string;
      try {
        content = await readFile(params.path, 'utf8');
      } catch (error) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        finish(missing ? `${params.path} does not exist.` : (error as Error).message, true);
        if (missing) return readAnswers.missing(params.path);
        throw refused(`Could not read ${params.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      if (params.line != null || params.limit != null) {
        const lines = content.split('\n');
        const from = Math.max(0, (params.line ?? 1) - 1);
        content = lines.slice(from, params.limit == null ? undefined : from + params.limit).join('\n');
      }
      finish(content, false);
      return { content };
    })
    .onRequest('fs/write_text_file', async ({ params }) => {
      if (!insideFolders(params.path, folders)) throw refused(`${params.path} is outside the session's folders (${folders.join(', ')}): refused.`);
      const { finish } = await gateRequest({ id: `acp_write_${++seq}`, name: 'Write', input: { file_path: params.path, content: params.content } }, `file:${params.path}`);
      try {
        await writeFile(params.path, params.content);
      } catch (error) {
        finish((error as Error).message, true);
        throw refused(`Could not write ${params.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      finish(`Wrote ${params.content.length} characters to ${params.path}.`, false);
      return {};
    })
    .onRequest('terminal/create', async ({ params }) => {
      // Its environment and folder are judged with the command: `PATH=/x ls` is not `ls`.
      const plan = planTerminal(params, { cwd: ctx.cwd, folders, inherited: options.env });
      if ('refused' in plan) throw refused(plan.refused);
      const approved = await gateRequest({ id: `acp_term_${++seq}`, name: 'Bash', input: { command: plan.judged } }, `command:${plan.judged}`);
      // The terminal runs the agent's program, folder and variables: an edited command (say, without
      // the PATH the agent set) was not what the person approved to run.
      const edited = (approved.input as { command?: unknown } | undefined)?.command;
      if (edited !== undefined && edited !== plan.judged) {
        const reason = `The person changed the command before approving it, and Sage runs only what was approved; nothing ran. The approved command was: ${String(edited)}`;
        approved.finish(reason, true);
        throw refused(reason);
      }
      const terminalId = terminals.create(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, outputByteLimit: params.outputByteLimit ?? null });
      void terminals.ended(terminalId).then(({ exit, output }) => {
        // A command still running when the session ended was killed with it, after the run's record closed.
        if (over) return;
        const status = exit.signal ? `killed by ${exit.signal}` : `exit code ${String(exit.exitCode)}`;
        approved.finish(`${output}${output.endsWith('\n') || output === '' ? '' : '\n'}[${status}]`, exit.exitCode !== 0);
      });
      return { terminalId };
    })
    .onRequest('terminal/output', ({ params }) => terminals.output(params.terminalId))
    .onRequest('terminal/wait_for_exit', ({ params }) => terminals.waitForExit(params.terminalId))
    .onRequest('terminal/kill', ({ params }) => {
      terminals.kill(params.terminalId);
      return {};
    })
    .onRequest('terminal/release', ({ params }) => {
      terminals.release(params.terminalId);
      return {};
    });

  /** One `session/update` of the agent: its text, its tool calls as they finish, anything else kept as it came. */
  const onUpdate = (update: Record<string, unknown> & { sessionUpdate: string }): void => {
    if (update.sessionUpdate === 'agent_message_chunk') {
      const content = update.content as { type?: string; text?: string } | undefined;
      if (content?.type === 'text' && typeof content.text === 'string') text += content.text;
      return;
    }
    const id = String(update.toolCallId);
    const done = update.status === 'completed' || update.status === 'failed';
    if (update.sessionUpdate === 'tool_call') {
      // A call already asked about keeps what the gate decided for it.
      if (!calls.has(id) && !ended.has(id)) calls.set(id, { call: callOf(update as unknown as ToolCallLike, ++seq), startedAt: Date.now() });
      if (done) endCall(id, { content: contentText(update.content), isError: update.status === 'failed' });
      return;
    }
    if (update.sessionUpdate === 'tool_call_update' && done) {
      endCall(id, { content: contentText(update.content), isError: update.status === 'failed' });
      return;
    }
    ctx.emit('agent.output', { agentName: options.name, line: JSON.stringify(update).slice(0, 20_000) });
  };

  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  try {
    return await app.connectWith(stream, async (agent: ClientContext) => {
      await agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } });
      const session = await agent.buildSession(ctx.cwd).withAdditionalDirectories(folders.slice(1)).start();
      ctx.emit('agent.session', { agentName: options.name, sessionId: session.sessionId });
      await ctx.rememberSession({ agent: options.name, sessionId: session.sessionId });
      const onAbort = () => {
        for (const cancel of waiting) cancel({ outcome: { outcome: 'cancelled' } });
        void agent.notify('session/cancel', { sessionId: session.sessionId }).catch(() => {});
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const prompted = session.prompt(ctx.task);
        prompted.catch(() => {});
        // The session's updates, in the order they came, until the turn stops.
        const turn = (async () => {
          for (;;) {
            const message = await session.nextUpdate();
            if (message.kind === 'stop') return message.response;
            onUpdate(message.update as unknown as Record<string, unknown> & { sessionUpdate: string });
          }
        })();
        const response = await Promise.race([
          turn,
          exited.then(() => {
            throw new AgentProcessError(`The ${options.name} agent exited before it answered${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`);
          }),
        ]);
        if (text) ctx.assistantText(text);
        if (response.stopReason === 'cancelled' && ctx.signal.aborted) throw ctx.signal.reason ?? new Error('cancelled');
        if (response.stopReason === 'refusal') throw new AgentProcessError(`The ${options.name} agent refused the task.`);
        return { finalText: text };
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
        session.dispose();
      }
    });
  } finally {
    over = true;
    terminals.releaseAll();
    child.stdin.end();
    try {
      if (child.pid) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // gone
    }
  }
}

interface ToolCallLike {
  toolCallId?: string;
  title?: string | null;
  kind?: string | null;
  rawInput?: unknown;
  locations?: Array<{ path: string }> | null;
}

/** An ACP tool call as the Sage call the gate judges: shell as Bash, file edits as Write, reads as Read. */
function callOf(toolCall: ToolCallLike, seq: number): AgentToolCall {
  const id = toolCall.toolCallId ?? `acp_${seq}`;
  const raw = (typeof toolCall.rawInput === 'object' && toolCall.rawInput !== null ? toolCall.rawInput : {}) as Record<string, unknown>;
  const path = toolCall.locations?.[0]?.path ?? (typeof raw.path === 'string' ? raw.path : typeof raw.file_path === 'string' ? raw.file_path : undefined);
  switch (toolCall.kind) {
    case 'execute': {
      const command = typeof raw.command === 'string' ? raw.command : Array.isArray(raw.command) ? commandLine(raw.command.map(String)) : (toolCall.title ?? '');
      return { id, name: 'Bash', input: { command } };
    }
    case 'edit':
    case 'delete':
    case 'move':
      if (path) return { id, name: 'Write', input: { file_path: path, ...(typeof raw.content === 'string' ? { content: raw.content } : {}) } };
      break;
    case 'read':
      if (path) return { id, name: 'Read', input: { file_path: path } };
      break;
    case 'fetch':
      if (typeof raw.url === 'string') return { id, name: 'WebFetch', input: { url: raw.url, prompt: toolCall.title ?? '' } };
      break;
  }
  return { id, name: `acp:${toolCall.kind ?? 'other'}`, input: { title: toolCall.title ?? '', ...raw } };
}

/** Why an approval with an edited input did not run: the agent can only run what it asked about. */
function editedRefusal(agent: string, approved: unknown): string {
  return (
    `The person changed the call before approving it, and the ${agent} agent can only run the call it asked about ` +
    `(ACP has no edited input); nothing ran. The approved input was: ${JSON.stringify(approved)}`
  );
}

/** What an approved permission request lets the agent do next without asking again. */
function grantKeyOf(call: AgentToolCall): string | undefined {
  const input = call.input as { command?: unknown; file_path?: unknown };
  if (call.name === 'Bash' && typeof input.command === 'string') return `command:${input.command}`;
  if ((call.name === 'Write' || call.name === 'Read') && typeof input.file_path === 'string') return `file:${input.file_path}`;
  return undefined;
}

/** The text of a tool call's content; a diff (Gemini CLI ends a write_file with one) as the file it wrote. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((c: { type?: string; content?: { type?: string; text?: string }; path?: unknown; newText?: unknown }) => {
      if (c?.type === 'content' && c.content?.type === 'text') return c.content.text ?? '';
      if (c?.type === 'diff' && typeof c.path === 'string') return `Wrote ${c.path}${typeof c.newText === 'string' ? ` (${c.newText.length} characters)` : ''}.`;
      return '';
    })
    .join('');
}
