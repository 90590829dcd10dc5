import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { InvalidInputError } from '../errors/index.js';
import type { RunEvent } from '../events/index.js';
import {
  InteractionAlreadyAnsweredError,
  InteractionBroker,
  InteractionNotFoundError,
  type InteractionPersistence,
  type InteractionResponse,
} from '../interaction/index.js';
import { run, type Run } from '../loop/index.js';
import { resolveModel } from '../model/resolve-model.js';
import type { Model } from '../model/types.js';
import { createPermissionEngine, type RuleSpec } from '../permission/index.js';
import type { InteractionRecord, RunRecord, Store, StoredRunStatus } from '../store/index.js';
import { builtinTools } from '../tool/builtin/index.js';
import type { Tool } from '../tool/types.js';
import { assertOpen } from './answer.js';
import { ConflictError } from './errors.js';
import type { RunDriver } from './run-driver.js';
import type { StartRunBody } from './schemas.js';
import { auditLogFromStore, userPermissionsFromStore } from './store-adapters.js';

export interface InProcessDriverOptions {
  /** Directories runs may work in; `cwd` must be inside one. Default: the process's cwd. */
  roots?: readonly string[];
  /** The model when a request names none (e.g. `anthropic:claude-sonnet-4-5`); default `env.SAGE_MODEL`. */
  defaultModel?: string;
  /** `scripted:<file>` models read a file named by the client: allowed only for tests and demos. */
  allowScriptedModels?: boolean;
  /** Override model resolution (tests, custom providers). */
  resolveModel?: (spec: string) => Model;
  tools?: () => Tool[];
  /** How long an interaction waits, ms (0: for ever). */
  interactionTimeoutMs?: number;
  leaseMs?: number;
  env?: NodeJS.ProcessEnv;
}

interface LiveRun {
  run: Run;
  broker: InteractionBroker;
  writer: EventWriter;
  /** Resolves once the outcome is written to the store. */
  done: Promise<void>;
}

/**
 * Drives runs in this process and records everything in the store as it happens: each event
 * (committed in order, in small batches), each interaction (committed before anyone can see it),
 * each answer (claimed once, atomically) and the outcome. It is what `sage serve` uses until the
 * durable runner (src/durable) takes over; unlike that runner it does not checkpoint, so a run
 * interrupted by a restart is left `suspended` in the store and is not continued.
 */
export class InProcessRunDriver implements RunDriver {
  readonly owner = `server:${randomUUID()}`;
  private readonly live = new Map<string, LiveRun>();
  private readonly answering = new Map<string, Promise<unknown>>();
  private readonly roots: string[];
  private readonly leaseMs: number;
  private readonly leaseTimer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly options: InProcessDriverOptions = {},
  ) {
    this.roots = (options.roots ?? [process.cwd()]).map((r) => resolve(r));
    this.leaseMs = options.leaseMs ?? 30_000;
    this.leaseTimer = setInterval(() => void this.renewLeases(), Math.max(1_000, this.leaseMs / 3));
    this.leaseTimer.unref();
  }

  async start(input: StartRunBody & { userId: string }): Promise<RunRecord> {
    if (this.closed) throw new ConflictError('shutting_down', 'The server is shutting down.');
    const cwd = this.resolveCwd(input.cwd);
    const spec = input.model ?? this.options.defaultModel ?? this.options.env?.['SAGE_MODEL'] ?? process.env['SAGE_MODEL'];
    if (!spec) throw new InvalidInputError('No model: pass "model" (e.g. "anthropic:claude-sonnet-4-5") or start the server with SAGE_MODEL.', { field: 'model' });
    const model = this.model(spec);
    const rules: RuleSpec[] = [
      ...(input.allow ?? []).map((rule) => ({ rule, behavior: 'allow' as const, source: 'request' })),
      ...(input.ask ?? []).map((rule) => ({ rule, behavior: 'ask' as const, source: 'request' })),
      ...(input.deny ?? []).map((rule) => ({ rule, behavior: 'deny' as const, source: 'request' })),
    ];
    const gate = createPermissionEngine({
      mode: input.permissionMode ?? 'default',
      rules,
      projectRoot: cwd,
      userStore: userPermissionsFromStore(this.store),
      audit: auditLogFromStore(this.store),
    });

    const id = `run_${randomUUID()}`;
    const record = await this.store.createRun(
      { id, userId: input.userId, sessionId: id, channel: 'web', task: input.task, options: { model: spec, cwd, permissionMode: input.permissionMode ?? 'default', allow: input.allow ?? [], ask: input.ask ?? [], deny: input.deny ?? [], maxSteps: input.maxSteps ?? null } },
      { id: this.owner, leaseMs: this.leaseMs },
    );
    const writer = new EventWriter(this.store, id, this.owner);
    const broker = new InteractionBroker({ persistence: this.persistence(writer) });
    const agent = run(input.task, {
      runId: id,
      model,
      tools: (this.options.tools ?? builtinTools)(),
      gate,
      mode: { type: 'interactive' },
      broker,
      cwd,
      userId: input.userId,
      sessionId: id,
      channel: 'web',
      maxSteps: input.maxSteps,
      interactionTimeoutMs: this.options.interactionTimeoutMs ?? 0,
      onEvent: (event) => writer.push(event),
    });
    const done = agent.outcome.then(
      async (outcome) => {
        await writer.flush();
        const status: StoredRunStatus = outcome.status;
        await this.store.write({
          runId: id,
          owner: this.owner,
          run: { status, finalText: outcome.finalText, error: outcome.error ?? null, pendingInteractionId: outcome.pendingInteractionId ?? null, release: true },
        });
      },
      async () => {
        await writer.flush();
        await this.store.write({ runId: id, owner: this.owner, run: { status: 'failed', error: { code: 'internal_error', message: 'The run stopped unexpectedly.' }, release: true } });
      },
    );
    const live: LiveRun = { run: agent, broker, writer, done: done.catch(() => {}).finally(() => this.live.delete(id)) };
    this.live.set(id, live);
    return record;
  }

  async respond(interactionId: string, response: InteractionResponse): Promise<InteractionRecord> {
    // One answer at a time per request: a second one waits, then sees who answered and when.
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
    const record = await this.store.getInteraction(interactionId);
    if (!record) throw new InteractionNotFoundError(interactionId);
    assertOpen(record);
    const live = this.live.get(record.runId);
    if (!live || !live.broker.isPending(interactionId)) {
      throw new ConflictError('run_not_live', `Run "${record.runId}" is not running in this server, so its interaction cannot be answered here; it was interrupted and is kept in the store.`);
    }
    try {
      await live.broker.respond(response);
    } catch (error) {
      if (!InteractionAlreadyAnsweredError.isInstance(error)) throw error;
      const now = await this.store.getInteraction(interactionId);
      throw new InteractionAlreadyAnsweredError(interactionId, now?.answeredBy ?? undefined, now?.answeredAt ?? undefined);
    }
    return (await this.store.getInteraction(interactionId)) ?? record;
  }

  async cancel(runId: string, reason: string): Promise<void> {
    const live = this.live.get(runId);
    if (live) {
      live.run.cancel(reason);
      await live.done;
      return;
    }
    const at = new Date().toISOString();
    await this.store.appendOrphanEvents(runId, (seq) => [{ seq, runId, type: 'run.cancelled', at, data: { reason } } as RunEvent], { status: 'cancelled', release: true });
    await this.store.closeRunInteractions(runId, reason);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.leaseTimer);
    const runs = [...this.live.values()];
    for (const live of runs) live.run.suspend('the server is shutting down');
    await Promise.all(runs.map((l) => l.done));
  }

  private persistence(writer: EventWriter): InteractionPersistence {
    const store = this.store;
    return {
      async save(request) {
        // Everything that led to the request is committed before the request becomes visible.
        await writer.flush();
        const prior = await store.saveInteraction(request);
        return prior;
      },
      async claimAnswer(request, response) {
        await store.claimAnswer(request.id, response, { consumed: true });
      },
      async close(requestId, status, reason) {
        await store.closeInteraction(requestId, status, reason);
      },
    };
  }

  private model(spec: string): Model {
    if (spec.startsWith('scripted:') && !this.options.allowScriptedModels) {
      throw new InvalidInputError('Scripted models are disabled on this server.', { field: 'model' });
    }
    return this.options.resolveModel ? this.options.resolveModel(spec) : resolveModel(spec, { env: this.options.env });
  }

  private resolveCwd(requested: string | undefined): string {
    const cwd = requested === undefined ? this.roots[0]! : resolve(this.roots[0]!, requested);
    const inside = this.roots.some((root) => {
      const rel = relative(root, cwd);
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    });
    if (!inside) throw new InvalidInputError(`The working directory must be inside ${this.roots.join(' or ')}.`, { field: 'cwd' });
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new InvalidInputError(`The working directory ${cwd} does not exist.`, { field: 'cwd' });
    return cwd;
  }

  private async renewLeases(): Promise<void> {
    const ids = [...this.live.keys()];
    if (ids.length === 0) return;
    try {
      await this.store.renewLeases(this.owner, ids, this.leaseMs);
    } catch {
      // A failed renewal is retried on the next tick; a lost lease shows up as LeaseLostError on write.
    }
  }
}

/**
 * Commits a run's events in order with group commit: `push` is synchronous (the loop's
 * `onEvent`); while one write is in flight, later events gather and go in the next single write,
 * so under load a run costs one transaction per round trip rather than one per event.
 */
class EventWriter {
  private pending: RunEvent[] = [];
  private inFlight: Promise<void> | undefined;
  private scheduled = false;
  private failure: unknown;

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly owner: string,
  ) {}

  push(event: RunEvent): void {
    this.pending.push(event);
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.kick();
    });
  }

  private kick(): void {
    if (this.inFlight || this.pending.length === 0 || this.failure !== undefined) return;
    const batch = this.pending;
    this.pending = [];
    this.inFlight = this.store.write({ runId: this.runId, owner: this.owner, events: batch }).then(
      () => {
        this.inFlight = undefined;
        this.kick();
      },
      (error: unknown) => {
        // A lost lease or a broken database: nothing after this can be logged in order.
        this.failure = error;
        this.inFlight = undefined;
      },
    );
  }

  /** Resolves once every event pushed so far is committed; rejects if a write failed. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      if (this.inFlight) await this.inFlight;
      else if (this.pending.length > 0) this.kick();
      else return;
    }
  }
}
