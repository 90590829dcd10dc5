import { InvalidInputError } from '../errors/index.js';
import { homedir } from 'node:os';
import { DurableRunner, type DurableRuntime, type StartOptions } from '../durable/index.js';
import { InteractionAlreadyAnsweredError, InteractionNotFoundError, type InteractionResponse } from '../interaction/index.js';
import type { InteractionRecord, RunRecord, Store } from '../store/index.js';
import { builtinTools } from '../tool/builtin/index.js';
import type { Tool } from '../tool/types.js';
import { assertOpen, assertRuleOffered } from './answer.js';
import type { Role } from './auth.js';
import type { RunDriver } from './run-driver.js';
import { RunPolicy, type RunPolicyOptions } from '../runtime/run-policy.js';
import type { StartRunBody } from './schemas.js';
import { ServerPolicy } from '../runtime/server-policy.js';
import { serverGatedRequest } from '../runtime/web-gate.js';
import { ConflictError } from './errors.js';
import { createRunFactory, type RunRequest } from '../runtime/create-run.js';
import type { RunHost } from '../runtime/run-host.js';
import { checkBeforeStart, HostSettingsError } from '../runtime/admission-checks.js';
import { resolveMcpServers } from '../mcp/config.js';

export interface DurableDriverOptions extends RunPolicyOptions {
  tools?: () => Tool[];
  /** How long an interaction waits before its timeout behaviour, ms (0: for ever). */
  interactionTimeoutMs?: number;
  /** How long a waiting run stays in memory before it is released to the store, ms. Default 5 min. */
  idleSuspendMs?: number;
  /**
   * How long a run whose task is done (idle: it waits for its next message) stays in memory, ms.
   * Default 0: released at that ask, with its last step's commit (DurableRunnerOptions.idleRunSuspendMs).
   */
  idleRunSuspendMs?: number;
  /**
   * At most this many runs wait for an answer in memory; beyond it the longest-waiting is released
   * to the store and resumed from it when answered (DurableRunnerOptions.maxWaitingInMemory).
   * Default SERVER_MAX_WAITING_IN_MEMORY.
   */
  maxWaitingInMemory?: number;
  leaseMs?: number;
  /** Events between checkpoints are written this long after they happen, ms. Default 2: live pages see them at once. */
  flushDelayMs?: number;
  /** What clients may do to a run's gate; default: the built-in policy, no settings files read. */
  serverPolicy?: ServerPolicy;
  /** The host's home (`~` in rules, protected paths); default SAGE_HOME, then the OS home. */
  home?: string;
}

/**
 * A server's cap on runs waiting in memory: it bounds their memory however many people have not
 * answered yet; the runs beyond wait in the store (their rows only) and an answer resumes them.
 * Not lower: a tap on a released run costs a rebuild, more server CPU than a tap on a live one, and
 * below a few thousand runs the released ones are rarely collected before the memory peak anyway
 * (figures in bench/README.md). Which runs stay: those whose wait began last.
 */
export const SERVER_MAX_WAITING_IN_MEMORY = 1000;

/**
 * Drives the server's runs through the durable runner: each run is checkpointed as it goes, an
 * answer is claimed exactly once and resumes the run here or on whichever instance holds it, a
 * waiting run is released from memory after a while and resumed by its answer, and runs left
 * by a dead instance are taken over.
 */
export class DurableRunDriver implements RunDriver, RunHost {
  readonly runner: DurableRunner;
  private readonly policy: RunPolicy;
  readonly serverPolicy: ServerPolicy;
  /** `~` of the host settings the server reads (agents, MCP servers, rules). */
  readonly home: string;
  private readonly answering = new Map<string, Promise<unknown>>();
  /** The run factory (the channels admit their runs with its `admitRun`). */
  readonly factory: ReturnType<typeof createRunFactory>;

  private constructor(
    private readonly store: Store,
    private readonly options: DurableDriverOptions,
  ) {
    this.policy = new RunPolicy(options);
    this.home = options.home ?? options.serverPolicy?.settings?.home ?? (process.env['SAGE_HOME'] || homedir());
    // Without an explicit policy the host's settings files still apply (their deny and ask rules).
    this.serverPolicy = options.serverPolicy ?? new ServerPolicy({ settings: { home: this.home } });
    // The one run factory (src/runtime): the server's policies make a web run's model and gate.
    this.factory = createRunFactory({ store, home: this.home, server: { policy: this.serverPolicy, runPolicy: this.policy }, tools: () => (options.tools ?? builtinTools)() });
    const runtime: DurableRuntime = this.factory;
    this.runner = new DurableRunner({ store, runtime, autoRecover: true, idleSuspendMs: options.idleSuspendMs, idleRunSuspendMs: options.idleRunSuspendMs ?? 0, maxWaitingInMemory: options.maxWaitingInMemory ?? SERVER_MAX_WAITING_IN_MEMORY, unreadEventLimit: 0, leaseMs: options.leaseMs, flushDelayMs: options.flushDelayMs ?? 2 });
  }

  /** What clients may choose when they start a run: read by GET /models and GET /roots. */
  get runPolicy(): RunPolicy {
    return this.policy;
  }

  /** Opens the runner (wake-ups, leases, takeover) and resumes what needs a driver. */
  static async open(store: Store, options: DurableDriverOptions = {}): Promise<DurableRunDriver> {
    const driver = new DurableRunDriver(store, options);
    await driver.runner.open();
    await driver.runner.recover();
    return driver;
  }

  async start(input: StartRunBody & { userId: string; role?: Role }): Promise<RunRecord> {
    const role = input.role ?? 'user';
    // The operator's policy first: a request that asks for more is refused before anything is created.
    const permissionMode = this.serverPolicy.checkStart(input, role);
    const cwd = this.policy.cwd(input.cwd);
    // The deny and ask rules of every folder from cwd up to its project root apply to the run.
    const projectRoot = this.policy.projectRoot(cwd);
    // An external agent: only a preset the operator allows, run with the host's command for it.
    let agentParts: Awaited<ReturnType<typeof import('../agents/index.js')['resolveAgentRun']>> | undefined;
    if (input.sandbox !== undefined && input.agent === undefined) throw new InvalidInputError('"sandbox" is the OS sandbox of an external agent: it needs "agent".', { field: 'sandbox' });
    if (input.agent !== undefined) {
      this.serverPolicy.checkAgent(input.agent);
      // A client never turns the sandbox off unless the operator allowed it when starting the server.
      this.serverPolicy.checkSandbox(input.sandbox);
      if (input.model !== undefined) throw new InvalidInputError('"agent" and "model" exclude each other: an external agent brings its own model.', { field: 'model' });
      const { resolveAgentRun } = await import('../agents/index.js');
      agentParts = resolveAgentRun({ name: input.agent, cwd, home: this.home, ...(input.sandbox ? { sandbox: input.sandbox } : {}) });
    }
    const model = agentParts ? `agent:${agentParts.agent.name}` : this.policy.modelSpec(input.model);
    // Resolve now so a bad spec or a missing key is a 400 to this request, not a failed run.
    if (!agentParts) this.policy.model(model);
    const spec = await this.admit({
      task: input.task,
      surface: 'web',
      model,
      cwd,
      projectRoot,
      principal: input.userId,
      ...(input.maxSteps ? { maxSteps: input.maxSteps } : {}),
      ...(this.options.interactionTimeoutMs ? { interactionTimeoutMs: this.options.interactionTimeoutMs } : {}),
      // The client's mode and lists, and the server's grant (its role, the policy's lists now): the web gate's.
      ...serverGatedRequest({ ...input, permissionMode, role }, this.serverPolicy),
      ...(agentParts ? { agent: agentParts.agent, ...(agentParts.chain ? { chain: agentParts.chain } : {}) } : {}),
    });
    const handle = await this.runner.start(input.task, { ...spec, userId: input.userId });
    const record = await this.store.getRun(handle.runId);
    if (!record) throw new InteractionNotFoundError(handle.runId);
    return record;
  }

  /**
   * Admits a run started through this server (a web request, a chat message): the checks of its
   * surface (the host's settings load, an agent's sandbox), the host's MCP servers for its folder,
   * then the factory's admitRun. Every refusal is a 4xx to the client, before anything is stored.
   */
  async admit(request: RunRequest): Promise<StartOptions> {
    try {
      await checkBeforeStart(request, { serverPolicy: this.serverPolicy, home: this.home });
    } catch (error) {
      // The file, line and field are the operator's to read (sage runs show, the host); not the client's.
      if (HostSettingsError.isInstance(error)) throw new ConflictError(error.code, error.message);
      throw error;
    }
    return this.factory.admitRun({ ...(await this.hostMcpServers(request.cwd)), ...request });
  }

  /**
   * The MCP servers the HOST configured for runs in `cwd` (its user settings; the project's
   * `.mcp.json` and settings once the host trusts the folder), for web and chat runs: a client never
   * names a server or a command. A configuration that does not load refuses the run (fail closed).
   */
  async hostMcpServers(cwd: string): Promise<Pick<RunRequest, 'mcpServers'>> {
    try {
      const { servers } = resolveMcpServers({ cwd, home: this.home, configFiles: [] });
      return Object.keys(servers).length ? { mcpServers: servers } : {};
    } catch {
      // The file and field are the operator's to read (sage mcp list on the host); not the client's.
      throw new ConflictError('mcp_config_invalid', "The host's MCP server configuration for this directory does not load, so no run starts here (fail closed); the operator must fix it (sage mcp list).");
    }
  }

  async respond(interactionId: string, response: InteractionResponse, known?: InteractionRecord): Promise<InteractionRecord> {
    // One answer at a time per request: a second one waits, then is told who answered and when.
    const previous = this.answering.get(interactionId);
    // The caller's record is only as fresh as its read: behind another answer here, read it again.
    const attempt = (previous ?? Promise.resolve()).catch(() => {}).then(() => this.answer(interactionId, response, previous ? undefined : known));
    this.answering.set(interactionId, attempt);
    try {
      return await attempt;
    } finally {
      if (this.answering.get(interactionId) === attempt) this.answering.delete(interactionId);
    }
  }

  private async answer(interactionId: string, response: InteractionResponse, known: InteractionRecord | undefined): Promise<InteractionRecord> {
    // A record read by the caller just now (the route's lookup) is as good as a second read: an
    // answer that raced it from elsewhere is refused by the store's compare-and-set below.
    const before = known ?? (await this.store.getInteraction(interactionId));
    if (!before) throw new InteractionNotFoundError(interactionId);
    assertOpen(before);
    assertRuleOffered(before, response);
    try {
      await this.runner.respond(interactionId, response, before);
    } catch (error) {
      if (!InteractionAlreadyAnsweredError.isInstance(error)) throw error;
      // Lost a race with another instance: report the winner, as a sequential second answer would.
      const now = await this.store.getInteraction(interactionId);
      throw new InteractionAlreadyAnsweredError(interactionId, now?.answeredBy ?? undefined, now?.answeredAt ?? undefined);
    }
    return (await this.store.getInteraction(interactionId)) ?? before;
  }

  async cancel(runId: string, reason: string): Promise<void> {
    await this.runner.cancel(runId, reason);
  }

  async close(): Promise<void> {
    await this.runner.close({ suspend: true });
  }
}
