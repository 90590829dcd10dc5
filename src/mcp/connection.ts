import path from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult, type Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { expandServer, type McpServerConfig } from './config.js';
import { McpServerError } from './errors.js';

/** How long starting a server (spawn or connect, then `initialize` and `tools/list`) may take. */
export const MCP_CONNECT_TIMEOUT_MS = 30_000;
/** How long one tool call may run, not counting time a person spends answering its elicitation. */
export const MCP_DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** The end of a stdio server's stderr kept for error messages. */
const STDERR_KEPT = 4_000;

export type ElicitParams = ElicitRequest['params'];
/** Answers a server's `elicitation/create` for the tool call that caused it. */
export type Elicit = (params: ElicitParams, signal: AbortSignal) => Promise<ElicitResult>;

export interface McpConnectionOptions {
  /** The run's folder: a stdio server starts here (or in its `cwd`, relative to it). */
  cwd: string;
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** The outcome of one call: the server's result, or why there is none (crash, hang, cancelled). */
export type CallOutcome = { ok: true; result: CallToolResult } | { ok: false; error: string };

/**
 * One MCP server of a run: a client over stdio or Streamable HTTP. A server that exits, drops the
 * connection or does not answer a call in time is closed (a stdio child is killed) and started
 * again for the next call, so the run gets an error result and goes on, never hangs.
 *
 * Elicitations carry no reference to the tool call that caused them (the SDK's client side does
 * not expose `relatedRequestId`), so they go to the call of this server in flight. The loop runs
 * MCP tools one at a time (they are never marked read-only), so there is at most one per run.
 */
export class McpConnection {
  private client: Client | undefined;
  private starting: Promise<Client> | undefined;
  private stderrTail = '';
  private readonly active: { elicit: Elicit; signal: AbortSignal; pause: () => void; resume: () => void }[] = [];
  /** Bumped at every (re)start: a close event of an old client must not tear down the new one. */
  private generation = 0;
  tools: McpToolInfo[] = [];
  instructions: string | undefined;
  restarts = 0;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {}

  get callTimeoutMs(): number {
    return this.config.timeout ?? this.options.callTimeoutMs ?? MCP_DEFAULT_CALL_TIMEOUT_MS;
  }

  /** Starts the server (if it is not running) and lists its tools. Throws McpServerError. */
  async start(): Promise<Client> {
    if (this.client) return this.client;
    return (this.starting ??= this.connect().finally(() => (this.starting = undefined)));
  }

  private async connect(): Promise<Client> {
    const generation = ++this.generation;
    const config = expandServer(this.name, this.config, this.options.env ?? process.env);
    const client = new Client({ name: 'sage', version: '1' }, { capabilities: { elicitation: { form: {}, url: {} } } });
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.onElicit(request.params, extra.signal));
    let transport: Transport;
    if (config.type === 'http') {
      transport = new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : {});
    } else {
      const stdio = new StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        // Only the SDK's safe defaults (PATH, HOME, …) plus what the config names: Sage's own secrets stay here.
        ...(config.env ? { env: config.env } : {}),
        cwd: path.resolve(this.options.cwd, config.cwd ?? '.'),
        stderr: 'pipe',
      });
      (stdio.stderr as Readable | null)?.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_KEPT);
      });
      transport = stdio;
    }
    client.onclose = () => {
      if (this.generation === generation) this.client = undefined;
    };
    const timeout = this.options.connectTimeoutMs ?? MCP_CONNECT_TIMEOUT_MS;
    try {
      await client.connect(transport, { timeout });
      const listed = await client.listTools(undefined, { timeout });
      this.tools = listed.tools;
      this.instructions = client.getInstructions();
    } catch (error) {
      await client.close().catch(() => {});
      throw new McpServerError(this.name, `could not start: ${describe(error)}${this.stderrNote()}`, { cause: error });
    }
    this.client = client;
    return client;
  }

  private stderrNote(): string {
    const tail = this.stderrTail.trim();
    return tail ? ` (its stderr: ${tail.slice(-500)})` : '';
  }

  private async onElicit(params: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    const call = this.active.at(-1);
    // Nobody is waiting on this server: there is no person to show it to, and no call to tie it to.
    if (!call) return { action: 'decline' };
    call.pause();
    const both = AbortSignal.any([signal, call.signal]);
    try {
      return await call.elicit(params, both);
    } finally {
      call.resume();
    }
  }

  /**
   * Calls a tool. Never throws and never hangs: a crash, a timeout or a cancellation is an error
   * outcome, and a server that crashed or hung is restarted for the next call.
   */
  async callTool(tool: string, args: Record<string, unknown>, options: { signal: AbortSignal; elicit: Elicit }): Promise<CallOutcome> {
    let client: Client;
    try {
      client = await this.start();
    } catch (error) {
      return { ok: false, error: describe(error) };
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal.reason);
    options.signal.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error('timeout'));
      }, this.callTimeoutMs);
    };
    const entry = { elicit: options.elicit, signal: controller.signal, pause: () => clearTimeout(timer), resume: arm };
    this.active.push(entry);
    arm();
    try {
      // The SDK's own timeout is off (our timer pauses while a person answers an elicitation).
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, { signal: controller.signal, timeout: 2_147_483_647 })) as CallToolResult;
      return { ok: true, result };
    } catch (error) {
      if (timedOut) {
        await this.restart();
        return { ok: false, error: `MCP server ${this.name} did not answer ${tool} within ${this.callTimeoutMs} ms; the call was cancelled and the server restarted` };
      }
      if (options.signal.aborted) return { ok: false, error: `the call to ${tool} was cancelled` };
      const closed = this.client !== client;
      if (closed) {
        this.restarts++;
        return { ok: false, error: `MCP server ${this.name} stopped during ${tool} (${describe(error)})${this.stderrNote()}; it will be started again for the next call` };
      }
      return { ok: false, error: `MCP server ${this.name} failed ${tool}: ${describe(error)}` };
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      this.active.splice(this.active.indexOf(entry), 1);
    }
  }

  /** Closes the current client (kills a stdio child); the next call starts a new one. */
  async restart(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.generation++;
    this.restarts++;
    // Not awaited: a hung stdio child may take the SDK's grace period (stdin closed, then SIGTERM)
    // to go, and the run need not wait for it.
    void client?.close().catch(() => {});
  }

  async close(): Promise<void> {
    const client = this.client ?? (await this.starting?.catch(() => undefined));
    this.client = undefined;
    this.generation++;
    await client?.close().catch(() => {});
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
