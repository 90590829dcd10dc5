import { homedir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { DurableRunner, type DurableRuntime } from '../durable/index.js';
import { InteractionAlreadyAnsweredError, InteractionNotFoundError, type InteractionResponse } from '../interaction/index.js';
import { createPermissionEngine, permissionModeSchema, rulesFromLists, type PermissionEngine } from '../permission/index.js';
import type { InteractionRecord, RunRecord, Store } from '../store/index.js';
import { builtinTools } from '../tool/builtin/index.js';
import type { Tool } from '../tool/types.js';
import { assertOpen, assertRuleOffered } from './answer.js';
import type { Role } from './auth.js';
import { ConflictError } from './errors.js';
import type { RunDriver } from './run-driver.js';
import { RunPolicy, type RunPolicyOptions } from './run-policy.js';
import type { StartRunBody } from './schemas.js';
import { ServerPolicy } from './server-policy.js';
import { auditLogFromStore, userPermissionsFromStore } from './store-adapters.js';

export interface DurableDriverOptions extends RunPolicyOptions {
  tools?: () => Tool[];
  /** How long an interaction waits before its timeout behaviour, ms (0: for ever). */
  interactionTimeoutMs?: number;
  /** How long a waiting run stays in memory before it is released to the store, ms. Default 5 min. */
  idleSuspendMs?: number;
  leaseMs?: number;
  /** Events between checkpoints are written this long after they happen, ms. Default 2: live pages see them at once. */
  flushDelayMs?: number;
  /** What clients may do to a run's gate; default: the built-in policy, no settings files read. */
  serverPolicy?: ServerPolicy;
  /** The host's home (`~` in rules, protected paths); default SAGE_HOME, then the OS home. */
  home?: string;
}

/** The permission settings a web run keeps in its stored options, so a resumed run gets the same gate. */
const webPermissionsSchema = z.object({
  permissionMode: permissionModeSchema.default('default'),
  allow: z.array(z.string()).default([]),
  ask: z.array(z.string()).default([]),
  deny: z.array(z.string()).default([]),
  /** The role of the user who started the run: the current policy decides again on resume. */
  role: z.enum(['user', 'admin']).default('user'),
});

/**
 * Drives the server's runs through the durable runner: each run is checkpointed as it goes, an
 * answer is claimed exactly once and resumes the run here or on whichever instance holds it, a
 * waiting run is released from memory after a while and resumed by its answer, and runs left
 * by a dead instance are taken over.
 */
export class DurableRunDriver implements RunDriver {
  readonly runner: DurableRunner;
  private readonly policy: RunPolicy;
  readonly serverPolicy: ServerPolicy;
  private readonly home: string;
  private readonly answering = new Map<string, Promise<unknown>>();

  private constructor(
    private readonly store: Store,
    private readonly options: DurableDriverOptions,
  ) {
    this.policy = new RunPolicy(options);
    this.serverPolicy = options.serverPolicy ?? new ServerPolicy();
    this.home = options.home ?? options.serverPolicy?.settings?.home ?? (process.env['SAGE_HOME'] || homedir());
    const runtime: DurableRuntime = {
      createModel: (spec) => this.policy.model(spec),
      tools: () => (options.tools ?? builtinTools)(),
      createGate: (run) => this.gateFor(run),
    };
    this.runner = new DurableRunner({ store, runtime, autoRecover: true, idleSuspendMs: options.idleSuspendMs, leaseMs: options.leaseMs, flushDelayMs: options.flushDelayMs ?? 2 });
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
    const model = this.policy.modelSpec(input.model);
    // Resolve now so a bad spec or a missing key is a 400 to this request, not a failed run.
    this.policy.model(model);
    const handle = await this.runner.start(input.task, {
      model,
      cwd,
      userId: input.userId,
      channel: 'web',
      ...(input.maxSteps ? { maxSteps: input.maxSteps } : {}),
      ...(this.options.interactionTimeoutMs ? { interactionTimeoutMs: this.options.interactionTimeoutMs } : {}),
      metadata: { permissionMode, allow: input.allow ?? [], ask: input.ask ?? [], deny: input.deny ?? [], role },
    });
    const record = await this.store.getRun(handle.runId);
    if (!record) throw new InteractionNotFoundError(handle.runId);
    return record;
  }

  async respond(interactionId: string, response: InteractionResponse): Promise<InteractionRecord> {
    // One answer at a time per request: a second one waits, then is told who answered and when.
    const previous = this.answering.get(interactionId) ?? Promise.resolve();
    const attempt = previous.catch(() => {}).then(() => this.answer(interactionId, response));
    this.answering.set(interactionId, attempt);
    try {
      return await attempt;
    } finally {
      if (this.answering.get(interactionId) === attempt) this.answering.delete(interactionId);
    }
  }

  private async answer(interactionId: string, response: InteractionResponse): Promise<InteractionRecord> {
    const before = await this.store.getInteraction(interactionId);
    if (!before) throw new InteractionNotFoundError(interactionId);
    assertOpen(before);
    assertRuleOffered(before, response);
    try {
      await this.runner.respond(interactionId, response);
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

  /**
   * The gate of a web run, the same on start and on resume: the server policy's deny and ask rules
   * and the host's settings (managed file in full, other files' deny and ask rules) come before
   * the client's rules, and deny wins over everything. The stored mode and allow rules are checked
   * again against the current policy. "Always" answers go to the run owner's per-user rules (or
   * the session), never to a settings file.
   */
  private async gateFor(run: RunRecord): Promise<PermissionEngine> {
    const metadata = (run.options['metadata'] ?? {}) as Record<string, unknown>;
    const parsed = webPermissionsSchema.safeParse(metadata);
    if (!parsed.success) throw new ConflictError('run_options_invalid', `Run ${run.id} has permission settings this server cannot read.`);
    const { ask, deny, role } = parsed.data;
    const { mode, allow } = this.serverPolicy.currentFor(parsed.data, role);
    const cwd = typeof run.options['cwd'] === 'string' ? run.options['cwd'] : undefined;
    const settings = cwd ? this.serverPolicy.settingsFor(cwd) : undefined;
    const engine = createPermissionEngine({
      mode,
      rules: [...this.serverPolicy.rules(), ...rulesFromLists({ deny, ask, allow }, 'request')],
      ...(settings ? { settings } : {}),
      home: this.home,
      ...(cwd ? { projectRoot: cwd } : {}),
      userStore: userPermissionsFromStore(this.store),
      audit: auditLogFromStore(this.store),
      persistRule: (rule, _scope, ctx, answeredBy) => this.rememberForUser(ctx.userId, rule, answeredBy ?? ctx.userId),
    });
    await this.restoreSessionRules(engine, run);
    return engine;
  }

  /** An "always" answer becomes an allow rule of the run's owner; a deny of the same rule stays. */
  private async rememberForUser(userId: string, rule: string, createdBy: string): Promise<void> {
    const existing = await this.store.listUserPermissions(userId);
    if (existing.some((r) => r.rule === rule && r.behavior === 'deny')) return;
    await this.store.addUserPermission({ userId, rule, behavior: 'allow', createdBy });
  }

  /**
   * Session rules ("always" for this run) live in the engine; a resumed run gets a new engine, so
   * they are rebuilt from the run's answered approvals (already checked against their suggestions).
   */
  private async restoreSessionRules(engine: PermissionEngine, run: RunRecord): Promise<void> {
    const answered = await this.store.listInteractions({ runId: run.id, status: ['answered'], limit: 1_000 });
    for (const record of answered) {
      const response = record.response;
      const request = record.request;
      if (!response || request.kind !== 'confirm' || response.kind !== 'confirm' || !response.confirmed || response.remember !== 'session') continue;
      // An edited input is approved once only, as the loop records it.
      if (response.updatedInput !== undefined && !isDeepStrictEqual(response.updatedInput, request.input)) continue;
      const rules = response.rule ? [response.rule] : (request.suggestions ?? []).map((s) => s.rule);
      for (const rule of rules) {
        try {
          engine.addRule(rule, 'allow', { sessionId: run.sessionId, source: 'session' });
        } catch {
          // A rule that no longer compiles is not restored: the call is asked again.
        }
      }
    }
  }
}
