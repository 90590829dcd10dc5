import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  InteractionBroker,
  batchResponder,
  createAutoResponder,
  validateResponse,
  InteractionCancelledError,
  InteractionNotFoundError,
  type InteractionResponse,
} from '../interaction/index.js';
import { run as startLoop, type Run, type RunOptions, type RunOutcome } from '../loop/index.js';
import type { Message } from '../model/types.js';
import {
  FINISHED_STATUSES,
  LeaseLostError,
  RunBusyError,
  RunNotFoundError,
  type InteractionRecord,
  type RunRecord,
  type Store,
  type StoreNotification,
  type Unsubscribe,
} from '../store/index.js';
import { SageError, formatZodError } from '../errors/index.js';
import { initialLoopState, joinLoopState, positionOf } from './checkpoint-codec.js';
import { RunFinishedError, RunLeftError, RunRebuildError } from './errors.js';
import { RecorderClosedError, RunRecorder } from './run-recorder.js';
import type { DurableRuntime, LoopExtras } from './runtime.js';
import { parseStoredOptions, storedRunOptionsSchema, type StoredRunOptions, type StoredRunOptionsInput } from './stored-options.js';

export interface DurableRunnerOptions {
  store: Store;
  runtime: DurableRuntime;
  /** This process's name in leases; default `host:pid:random`. */
  instanceId?: string;
  /** How long a lease lasts without renewal, ms. Default 30 s. */
  leaseMs?: number;
  /**
   * How long a run waits in memory for an answer before it is released (suspended), ms. 0 releases
   * it as soon as it asks (nobody is there: `--detach`, `sage respond`). Default 5 minutes.
   */
  idleSuspendMs?: number;
  /** Renew leases, expire requests (and with autoRecover, take over orphans) this often, ms. Default leaseMs / 3. */
  maintenanceIntervalMs?: number;
  /** Take over dead instances' runs and resume answered ones on every maintenance tick (servers). */
  autoRecover?: boolean;
  /** Events between checkpoints are written this long after they happen, ms. Default 20. */
  flushDelayMs?: number;
  /**
   * How often a run waiting here looks in the store for an answer (or a cancel, an expiry) that
   * reached the store without reaching this process, ms; 0 never. The backstop under notifications:
   * another process's answer on SQLite (no cross-process push), a Postgres NOTIFY lost while the
   * LISTEN connection was down, an answering process that died before it sent its wake. Default
   * 250 on SQLite (skipped while PRAGMA data_version says no other process committed), 500 on Postgres.
   */
  wakePollMs?: number;
  /**
   * A stored run could not be rebuilt here and was marked failed (see RunRebuildError). Default:
   * one line on stderr. A server passes its logger.
   */
  onRunFailed?(error: RunRebuildError): void;
}

export interface StartOptions extends StoredRunOptionsInput {
  runId?: string;
  userId?: string;
  sessionId?: string;
  channel?: string;
}

/** A run driven by this process. `outcome` settles after the final state is in the store. */
export interface DurableRunHandle {
  runId: string;
  run: Run;
  outcome: Promise<DurableOutcome>;
}

export interface DurableOutcome extends RunOutcome {
  /** Another instance took the run over; nothing more was written by this one. */
  leaseLost?: boolean;
}

/**
 * Where an answer went: `live` to the loop waiting here, `resumed` the run here (handle), `notified`
 * the live instance that drives it, `stored` only (someone else resumes it, or the run ended).
 */
export type Delivery = { delivered: 'live' | 'notified' | 'stored' } | { delivered: 'resumed'; handle: DurableRunHandle };
export type RespondResult = { response: InteractionResponse } & Delivery;

export interface RecoverResult {
  /** Runs this process now drives. */
  resumed: string[];
  expired: string[];
  /** Runs not resumed because their settings files do not load (left as they were). */
  left: RunLeftError[];
}

interface LiveRun {
  handle: DurableRunHandle;
  broker: InteractionBroker;
  recorder: RunRecorder;
  idleTimer?: NodeJS.Timeout;
  /** An answer or a cancel arrived through the store for a request this process was waiting on. */
  wake?: 'answered' | 'cancel';
  /** Never released while it waits: its work lives in this process (an external agent's process). */
  hold?: boolean;
}

/**
 * Drives durable runs for one process: starts them, resumes them from the store, routes answers,
 * keeps leases, and takes over runs whose owner died. One per process and store.
 *
 * @example
 * const runner = new DurableRunner({ store, runtime });
 * const { runId, outcome } = await runner.start('fix the tests', { model: 'scripted:/abs/demo.json' });
 * // later, from any process:
 * await new DurableRunner({ store, runtime }).respond(`${runId}:call_0_0:permission`, { kind: 'confirm', confirmed: true });
 */
export class DurableRunner {
  readonly store: Store;
  readonly instanceId: string;
  readonly leaseMs: number;
  private readonly live = new Map<string, LiveRun>();
  /**
   * Runs being claimed and rebuilt here (between the decision to resume and the loop being live).
   * A second resume of the same run — a wake, an answer, a maintenance sweep — joins this one
   * instead of claiming it again: the claim succeeds for the same instance, so two loops would
   * otherwise drive one run.
   */
  private readonly starting = new Map<string, Promise<DurableRunHandle>>();
  private readonly settling = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: Promise<Unsubscribe> | undefined;
  private closed = false;
  private maintaining: Promise<unknown> | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** The store's data version at the last look for settled requests (SQLite); undefined: look. */
  private seenVersion: number | undefined;

  constructor(private readonly options: DurableRunnerOptions) {
    this.store = options.store;
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  /** Starts listening for wake-ups and running maintenance (leases, expiry, takeover). */
  async open(): Promise<this> {
    this.unsubscribe ??= this.store.subscribe('*', (n) => this.onNotification(n));
    await this.unsubscribe;
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.options.maintenanceIntervalMs ?? Math.max(50, Math.floor(this.leaseMs / 3)));
      this.timer.unref();
    }
    const pollMs = this.options.wakePollMs ?? (this.store.backend === 'sqlite' ? 250 : 500);
    if (!this.pollTimer && pollMs > 0) {
      this.pollTimer = setInterval(() => this.pollWaiting(false), pollMs);
      this.pollTimer.unref();
    }
    return this;
  }

  /** Runs this process drives now. */
  liveRunIds(): string[] {
    return [...this.live.keys()];
  }

  handle(runId: string): DurableRunHandle | undefined {
    return this.live.get(runId)?.handle;
  }

  /** Creates a run and drives it here. */
  async start(task: string, options: StartOptions): Promise<DurableRunHandle> {
    const record = await this.create(task, options, true);
    return this.drive(record);
  }

  /**
   * Creates a run without driving it (`sage run --detach`): it is queued as running with no
   * owner, and the next `recover()` anywhere (a server, `sage runs recover`) picks it up.
   */
  async enqueue(task: string, options: StartOptions): Promise<RunRecord> {
    return this.create(task, options, false);
  }

  private async create(task: string, options: StartOptions, own: boolean): Promise<RunRecord> {
    const { runId, userId, sessionId, channel, ...rest } = options;
    const stored = parseStoredOptions(rest);
    const id = runId ?? `run_${randomUUID()}`;
    return this.store.createRun(
      { id, userId: userId ?? 'local', sessionId: sessionId ?? id, channel: channel ?? 'sdk', task, options: stored },
      own ? { id: this.instanceId, leaseMs: this.leaseMs } : null,
    );
  }

  /**
   * Resumes a run here from its last checkpoint: a suspended one, or a running one whose owner's
   * lease expired. Throws RunBusyError while a live instance drives it, RunFinishedError once done.
   */
  resume(runId: string): Promise<DurableRunHandle> {
    return this.once(runId, async () => {
      const record = await this.store.getRun(runId);
      if (!record) throw new RunNotFoundError(runId);
      if (FINISHED_STATUSES.includes(record.status)) throw new RunFinishedError(runId, record.status);
      const claimed = await this.store.claimRun(runId, this.instanceId, this.leaseMs, ['suspended', 'idle', 'running']);
      if (!claimed) {
        const now = await this.store.getRun(runId);
        if (now && FINISHED_STATUSES.includes(now.status)) throw new RunFinishedError(runId, now.status);
        throw new RunBusyError(runId, now?.owner ?? 'another instance', now?.leaseExpiresAt ?? null);
      }
      return this.drive(claimed);
    });
  }

  /** At most one claim-and-rebuild of a run at a time in this process; a live run is returned as is. */
  private once(runId: string, start: () => Promise<DurableRunHandle>): Promise<DurableRunHandle> {
    const existing = this.live.get(runId);
    if (existing) return Promise.resolve(existing.handle);
    const inFlight = this.starting.get(runId);
    if (inFlight) return inFlight;
    const started = start();
    this.starting.set(runId, started);
    const clear = () => {
      if (this.starting.get(runId) === started) this.starting.delete(runId);
    };
    started.then(clear, clear);
    return started;
  }

  /**
   * Answers a stored request. The response is validated against the request, the first valid
   * answer wins atomically (a later one gets InteractionAlreadyAnsweredError saying who and
   * when), and the run resumes: here when this process drives it or nobody does, through a
   * notification when another live instance does.
   */
  async respond(interactionId: string, raw: unknown): Promise<RespondResult> {
    const stored = await this.store.getInteraction(interactionId);
    if (!stored) throw new InteractionNotFoundError(interactionId);
    const body = typeof raw === 'object' && raw !== null ? { ...raw, requestId: interactionId } : raw;
    const response = validateResponse(stored.request, body);
    const live = this.live.get(stored.runId);
    if (live?.broker.isPending(interactionId)) {
      try {
        return { response: await live.broker.respond(body), delivered: 'live' };
      } catch (error) {
        // The loop here no longer holds the run (taken over, claimed again, or shutting down): the
        // answer is stored for whoever drives it now.
        // So is one the loop let go while its request was being saved (suspended: the request stays open).
        const detached = error instanceof InteractionCancelledError && live.broker.get(interactionId) === undefined;
        if (!(error instanceof LeaseLostError || error instanceof RecorderClosedError || detached)) throw error;
      }
    }
    // Nobody drives the run here: claim it with the answer, in one commit, when it is released.
    const claimHere = !this.closed && !this.live.has(stored.runId) && !this.starting.has(stored.runId);
    const answered = await this.store.claimAnswer(interactionId, response, claimHere ? { claimRun: { owner: this.instanceId, leaseMs: this.leaseMs } } : {});
    if (answered.claimedRun) return { response, ...(await this.driveClaimed(answered.claimedRun)) };
    return { response, ...(await this.wakeAfterAnswer(stored)) };
  }

  /** Drives a run claimed with its answer; one that cannot be rebuilt keeps the answer stored. */
  private async driveClaimed(record: RunRecord): Promise<Delivery> {
    const claimed = record;
    try {
      return { delivered: 'resumed', handle: await this.once(claimed.id, () => this.drive(claimed)) };
    } catch (error) {
      if (error instanceof RunRebuildError || error instanceof RunLeftError || error instanceof LeaseLostError) return { delivered: 'stored' };
      throw error;
    }
  }

  /** After an answer was stored: resume the run here, or tell its live owner. */
  private async wakeAfterAnswer(stored: InteractionRecord): Promise<Delivery> {
    // Driven (or being rebuilt) here: the loop picks the stored answer up, now or when it asks again.
    if (this.live.has(stored.runId) || this.starting.has(stored.runId)) {
      try {
        return { delivered: 'resumed', handle: await this.wakeHere(stored.runId, stored.id) };
      } catch (error) {
        if (error instanceof RunBusyError || error instanceof RunFinishedError || error instanceof RunRebuildError || error instanceof RunLeftError) return { delivered: 'stored' };
        throw error;
      }
    }
    const run = await this.store.getRun(stored.runId);
    if (!run || FINISHED_STATUSES.includes(run.status)) return { delivered: 'stored' };
    const ownerAlive = (run.status === 'running' || run.status === 'idle') && run.owner !== null && run.leaseExpiresAt !== null && Date.parse(run.leaseExpiresAt) >= Date.now();
    if (ownerAlive && run.owner !== this.instanceId) {
      await this.store.publish({ type: 'wake', runId: run.id, interactionId: stored.id, reason: 'answered' });
      return { delivered: 'notified' };
    }
    try {
      return { delivered: 'resumed', handle: await this.wakeHere(run.id, stored.id) };
    } catch (error) {
      // Cannot be rebuilt: it is failed now, with the reason; the answer stays stored.
      if (error instanceof RunFinishedError || error instanceof RunRebuildError || error instanceof RunLeftError) return { delivered: 'stored' };
      if (error instanceof RunBusyError) {
        // Someone else claimed it meanwhile (or its owner renewed a lease that looked expired here):
        // tell the owner, which may already be waiting on this request in memory.
        await this.store.publish({ type: 'wake', runId: run.id, interactionId: stored.id, reason: 'answered' });
        return { delivered: 'notified' };
      }
      throw error;
    }
  }

  /**
   * An answer to `interactionId` was committed to the store (by another process, or here outside
   * the loop): make the run here use it, whatever state its driving is in.
   * - the loop waits on that request in memory: release it and rebuild it, the ask finds the answer;
   * - the loop is live but not waiting on it (still rebuilding, before its ask; or unwinding): the
   *   ask to come reads the answer, and if this incarnation ends suspended it is resumed again
   *   (at worst once for nothing: it asks again and finds the answer already used);
   * - the run is being claimed and rebuilt here: join that; its ask comes after the answer's commit;
   * - otherwise resume it here.
   */
  private wakeHere(runId: string, interactionId: string | undefined): Promise<DurableRunHandle> {
    const live = this.live.get(runId);
    if (live) {
      live.wake = 'answered';
      if (!interactionId || live.broker.isPending(interactionId)) live.handle.run.suspend('answered from another process');
      return Promise.resolve(live.handle);
    }
    return this.resume(runId);
  }

  /** Cancels a run wherever it is: here, on its live owner (notified), or in the store. */
  async cancel(runId: string, reason = 'the run was cancelled'): Promise<'live' | 'notified' | 'stored'> {
    const live = this.live.get(runId);
    if (live) {
      live.handle.run.cancel(reason);
      await live.handle.outcome;
      return 'live';
    }
    const run = await this.store.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    if (FINISHED_STATUSES.includes(run.status)) throw new RunFinishedError(runId, run.status);
    try {
      await this.store.closeRunInteractions(runId, reason);
      await this.store.appendOrphanEvents(runId, (seq) => [{ seq, runId, type: 'run.cancelled', at: new Date().toISOString(), data: { reason } }], { status: 'cancelled', pendingInteractionId: null });
      return 'stored';
    } catch (error) {
      if (!(error instanceof RunBusyError)) throw error;
      await this.store.publish({ type: 'wake', runId, reason: 'cancel' });
      return 'notified';
    }
  }

  /** Releases a live run from memory; it waits in the store for its answer. */
  async suspend(runId: string, reason = 'nobody is there to answer'): Promise<DurableOutcome | undefined> {
    const live = this.live.get(runId);
    if (!live) return undefined;
    live.handle.run.suspend(reason);
    return live.handle.outcome;
  }

  /**
   * Crash recovery and takeover: expires overdue requests, then resumes here every run that
   * needs a driver — running runs whose owner's lease expired (their in-flight tool calls get an
   * "interrupted by restart" result), queued runs, and suspended runs whose request was answered,
   * expired or cancelled while nobody drove them.
   */
  async recover(options: { limit?: number } = {}): Promise<RecoverResult> {
    const limit = options.limit ?? 100;
    const expired = await this.expireDue();
    const resumed: string[] = [];
    const left: RunLeftError[] = [];
    // Never re-claim what this process drives or is rebuilding (its lease may have run out under
    // load): a new claim would fence its live loop out.
    const orphans = await this.store.claimOrphans(this.instanceId, this.leaseMs, limit, { exclude: [...this.live.keys(), ...this.starting.keys()] });
    // Every claimed run is registered as being rebuilt before anything else can run: a resume of one
    // of them meanwhile (an answer, a wake) joins this claim instead of claiming it again.
    const claimed = orphans.filter((record) => !this.live.has(record.id) && !this.starting.has(record.id));
    const started = await Promise.allSettled(claimed.map((record) => this.once(record.id, () => this.drive(record))));
    started.forEach((result, i) => {
      if (result.status === 'fulfilled') resumed.push(claimed[i]!.id);
      else if (result.reason instanceof RunLeftError) left.push(result.reason);
      // Claimed again since (by another instance): the claim's writes were refused; it drives the run.
      // Cannot be rebuilt here: it was marked failed (and reported); the others go on.
      else if (!(result.reason instanceof LeaseLostError || result.reason instanceof RunRebuildError || result.reason instanceof RunLeftError)) throw result.reason;
    });
    for (const record of await this.wakeableRuns(limit)) {
      try {
        await this.resume(record.id);
        resumed.push(record.id);
      } catch (error) {
        if (error instanceof RunLeftError) left.push(error);
        else if (!(error instanceof RunBusyError || error instanceof RunFinishedError || error instanceof RunRebuildError)) throw error;
      }
    }
    return { resumed, expired, left };
  }

  /** Released runs (suspended, or idle with no owner) whose awaited request is no longer pending. */
  private async wakeableRuns(limit: number): Promise<RunRecord[]> {
    const suspended = await this.store.listRuns({ status: ['suspended', 'idle'], limit: limit * 10 });
    const out: RunRecord[] = [];
    for (const run of suspended) {
      if (out.length >= limit) break;
      // An idle run with an owner waits in that owner's memory (or is an orphan: claimOrphans's).
      if (run.owner !== null || this.live.has(run.id) || this.starting.has(run.id)) continue;
      if (!run.pendingInteractionId) {
        out.push(run);
        continue;
      }
      const interaction = await this.store.getInteraction(run.pendingInteractionId);
      if (!interaction || interaction.status !== 'pending') out.push(run);
    }
    return out;
  }

  /** Applies timeout behaviour to overdue requests: a live run gets it now, a suspended one on resume. */
  async expireDue(): Promise<string[]> {
    const expired = await this.store.expireDue();
    for (const record of expired) {
      const live = this.live.get(record.runId);
      // The store already says expired; the broker tells the waiting code (deny a permission, cancel a question).
      if (live) await live.broker.close(record.id, 'expired', record.reason ?? 'expired');
    }
    return expired.map((r) => r.id);
  }

  /**
   * Stops maintenance and releases every live run (suspends them) so another process can take over.
   * `suspend: false` leaves them as a crash would (running, under this instance's lease, to be taken
   * over when it expires): the loops stop here without writing anything more. Either way, when this
   * resolves nothing of this runner touches the store any more (the store can be closed).
   */
  async close(options: { suspend?: boolean } = {}): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await this.maintaining;
    await this.polling;
    // Runs being rebuilt become live (or fail) first, so they are stopped too.
    await Promise.allSettled([...this.starting.values()]);
    if (options.suspend !== false) {
      await Promise.all([...this.live.keys()].map((id) => this.suspend(id, 'the process is shutting down')));
    } else {
      await Promise.all(
        [...this.live.values()].map(async (live) => {
          await live.recorder.stop();
          live.handle.run.suspend('the process is shutting down');
        }),
      );
    }
    while (this.settling.size) await Promise.allSettled([...this.settling]);
    await Promise.all([...this.live.values()].map((live) => live.recorder.stop()));
    const unsubscribe = await this.unsubscribe;
    await unsubscribe?.();
  }

  /** One maintenance pass at a time: under load a tick can outlast the interval. */
  private tick(): void {
    if (this.maintaining || this.closed) return;
    this.maintaining = this.maintain()
      // A failed pass (the database unreachable a moment) is retried on the next tick.
      .catch(() => {})
      .finally(() => {
        this.maintaining = undefined;
      });
  }

  private async maintain(): Promise<void> {
    if (this.closed) return;
    const lives = [...this.live.entries()];
    const ids = [...lives.map(([id]) => id), ...[...this.starting.keys()].filter((id) => !this.live.has(id))];
    if (ids.length) {
      const kept = new Set(await this.store.renewLeases(this.instanceId, ids, this.leaseMs));
      for (const [id, live] of lives) {
        // Lost: another instance took the run over. Stop here without writing (writes are fenced anyway).
        // Only the incarnation the renewal was asked for: a newer one here has its own claim.
        if (!kept.has(id) && this.live.get(id) === live && !live.recorder.stopped) live.handle.run.suspend('another instance took the run over');
      }
    }
    if (this.options.autoRecover) await this.recover();
    else await this.expireDue();
  }

  private onNotification(n: StoreNotification): void {
    // The channel was down a while: a wake sent meanwhile is lost; look in the store now.
    if (n.type === 'resync' && !this.closed) this.pollWaiting(true);
    if (n.type !== 'wake' || this.closed) return;
    if (n.reason === 'cancel') {
      this.live.get(n.runId)?.handle.run.cancel('the run was cancelled');
      return;
    }
    // The answer was stored by another process: hand it to the run driven (or being rebuilt) here.
    if (this.live.has(n.runId) || this.starting.has(n.runId) || n.reason === 'answered') void this.wakeHere(n.runId, n.interactionId).catch(() => {});
  }

  /** One look at a time; `force` looks even when the data version says nothing changed. */
  private pollWaiting(force: boolean): void {
    if (this.closed) return;
    if (this.polling) {
      // A forced look (resync) must not be swallowed by a routine one already in flight.
      if (force) void this.polling.then(() => this.pollWaiting(true));
      return;
    }
    this.polling = this.checkWaiting(force)
      // The database unreachable a moment: the next tick looks again.
      .catch(() => {})
      .finally(() => {
        this.polling = undefined;
      });
  }

  /**
   * Finds the requests runs here wait for in memory that the store says are settled — answered,
   * expired or cancelled by another process whose push never arrived — and acts as the push would
   * have: an answer wakes the run (it rebuilds and reads it), an expiry closes the request, a
   * cancel (only a run cancel closes another driver's request) cancels the run. One primary-key
   * query; on SQLite only when another connection committed since the last look.
   */
  private async checkWaiting(force: boolean): Promise<void> {
    const waiting = new Map<string, string>();
    for (const [runId, live] of this.live) for (const request of live.broker.pending(runId)) waiting.set(request.id, runId);
    if (waiting.size === 0) return;
    const version = await this.store.dataVersion?.();
    if (!force && version !== undefined && version === this.seenVersion) return;
    const settled = await this.store.listInteractions({ ids: [...waiting.keys()], status: ['answered', 'expired', 'cancelled'] });
    this.seenVersion = version;
    for (const record of settled) {
      const live = this.live.get(record.runId);
      // Settled here meanwhile (answered through this process, expired by its own timer): nothing to do.
      if (this.closed || !live?.broker.isPending(record.id)) continue;
      // Consumed: a loop already took it — this one, whose save is returning it right now (waking it
      // would only rebuild it for nothing), or a newer incarnation elsewhere (this one is stale).
      if (record.status === 'answered' && record.consumed) continue;
      if (record.status === 'answered') void this.wakeHere(record.runId, record.id).catch(() => {});
      else if (record.status === 'expired') void live.broker.close(record.id, 'expired', record.reason ?? 'expired').catch(() => {});
      else live.handle.run.cancel(record.reason ?? 'the run was cancelled');
    }
  }

  /**
   * Marks a claimed run that cannot be rebuilt here as failed — its `run.failed` event, its status
   * and error, its open requests closed, the claim released — in one write fenced by the claim, and
   * reports it. Returns the error for the caller to throw (LeaseLostError when the run was claimed
   * again meanwhile: that claim decides, nothing was written).
   */
  private async failUnbuildable(record: RunRecord, error: RunRebuildError): Promise<Error> {
    const failure = { code: error.code, message: error.message };
    try {
      const seq = (await this.store.lastEventSeq(record.id)) + 1;
      await this.store.write({
        runId: record.id,
        owner: this.instanceId,
        epoch: record.epoch,
        events: [{ seq, runId: record.id, type: 'run.failed', at: new Date().toISOString(), data: failure }],
        run: { status: 'failed', release: true, pendingInteractionId: null, error: failure, closeInteractions: `the run failed (${error.code})` },
      });
    } catch (writeError) {
      if (writeError instanceof LeaseLostError) return writeError;
      throw writeError;
    }
    if (this.options.onRunFailed) this.options.onRunFailed(error);
    else process.stderr.write(`sage: ${error.message} It was marked failed.\n`);
    return error;
  }

  /** Releases a claimed run that must not be driven now, writing nothing else; returns the error to throw. */
  private async leave(record: RunRecord, error: RunLeftError): Promise<Error> {
    try {
      await this.store.write({ runId: record.id, owner: this.instanceId, epoch: record.epoch, run: { release: true } });
    } catch (writeError) {
      if (writeError instanceof LeaseLostError) return writeError;
      throw writeError;
    }
    return error;
  }

  /**
   * What a run needs that is not in the store — its options parsed, its model, tools and gate — built
   * before anything of the run is written; a part that fails marks the run failed (failUnbuildable).
   */
  private async rebuild(record: RunRecord): Promise<{ options: StoredRunOptions; model: RunOptions['model']; tools: RunOptions['tools']; gate: RunOptions['gate']; extras: LoopExtras }> {
    const runtime = this.options.runtime;
    const parsed = storedRunOptionsSchema.safeParse(record.options);
    if (!parsed.success) throw await this.failUnbuildable(record, new RunRebuildError(record.id, 'options', formatZodError(parsed.error)));
    const options = parsed.data;
    const parts = await Promise.allSettled([
      (async () => runtime.createModel(options.model, record))(),
      (async () => (typeof runtime.tools === 'function' ? runtime.tools(record, this) : runtime.tools))(),
      (async () => runtime.createGate?.(record))(),
    ]);
    const names = ['model', 'tools', 'gate'] as const;
    // Broken settings files: failing the run would decide for the person; it waits, unclaimed, for
    // the fix — whatever else fails too.
    const unsettled = parts.find((p): p is PromiseRejectedResult => p.status === 'rejected' && SageError.isInstance(p.reason) && p.reason.code === 'settings_invalid');
    if (unsettled) throw await this.leave(record, new RunLeftError(record.id, (unsettled.reason as Error).message, { cause: unsettled.reason }));
    const failed = parts.findIndex((p) => p.status === 'rejected');
    if (failed >= 0) {
      const cause = (parts[failed] as PromiseRejectedResult).reason as unknown;
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw await this.failUnbuildable(record, new RunRebuildError(record.id, names[failed]!, reason, { cause }));
    }
    const [model, tools, gate] = parts.map((p) => (p as PromiseFulfilledResult<unknown>).value);
    let extras: LoopExtras;
    try {
      extras = (await runtime.loopExtras?.(record, model as RunOptions['model'])) ?? {};
    } catch (cause) {
      throw await this.failUnbuildable(record, new RunRebuildError(record.id, 'model', cause instanceof Error ? cause.message : String(cause), { cause }));
    }
    return { options, model: model as RunOptions['model'], tools: tools as RunOptions['tools'], gate: gate as RunOptions['gate'], extras };
  }

  /** Builds the loop for a run this process has just claimed, and follows it into the store. */
  private async drive(record: RunRecord): Promise<DurableRunHandle> {
    const runtime = this.options.runtime;
    const { options, model, tools, gate, extras } = await this.rebuild(record);
    const loaded = await this.store.loadCheckpoint(record.id);
    const lastSeq = loaded ? loaded.lastSeq : await this.store.lastEventSeq(record.id);
    const history = (options.history ?? []) as Message[];
    const fresh = !loaded && lastSeq === 0;
    const state = loaded ? joinLoopState(record.id, loaded) : initialLoopState(record, history, lastSeq);

    let interrupted: string[] = [];
    let startedCalls: string[] = [];
    if (!fresh) {
      // A call that started and has no result was running when its process stopped. It is reported,
      // never re-run — unless it was blocked on its first ask, which re-running only asks again.
      const calls = await this.store.listToolCalls(record.id);
      // A call an earlier incarnation already marked interrupted is reported again when no checkpoint
      // holds that report (the incarnation was suspended before its turn's next checkpoint): its
      // status is no longer `started`, and it must not look like a call that never ran.
      const reported = (c: (typeof calls)[number]) => c.status === 'interrupted' || (c.status === 'started' && !(c.waiting && !c.passedAsk));
      interrupted = calls.filter((c) => reported(c) && !state.turnResults[c.toolCallId]).map((c) => c.toolCallId);
      startedCalls = calls.filter((c) => c.status === 'started').map((c) => c.toolCallId);
    }

    const live = {} as LiveRun;
    const recorder = new RunRecorder({
      store: this.store,
      runId: record.id,
      owner: this.instanceId,
      epoch: record.epoch,
      position: positionOf(loaded),
      flushDelayMs: this.options.flushDelayMs,
      ...(fresh ? {} : { resumed: { startedCalls } }),
      onWaiting: () => this.armIdle(live),
      onLeaseLost: () => live.handle?.run.suspend('another instance took the run over'),
    });
    await recorder.markInterrupted(interrupted);

    const broker = new InteractionBroker({ persistence: recorder });
    if (options.mode === 'batch') broker.responder = batchResponder;
    else if (options.mode === 'non-interactive') broker.responder = createAutoResponder(options.autoResponse ?? 'allow');
    else broker.responder = runtime.createResponder?.(record);
    broker.onEvent = (event) => {
      // Idle counts while any request waits: one ending (answered, say) leaves the others waiting.
      if (event.type !== 'interaction.requested' && broker.pending(record.id).length === 0) this.disarmIdle(live);
    };

    const extraListener = extras.onEvent;
    const system = options.system ?? extras.system;
    const loopOptions: RunOptions = {
      model: extras.model ?? model,
      tools,
      ...(gate ? { gate } : {}),
      mode: loopMode(options),
      broker,
      runId: record.id,
      userId: record.userId,
      sessionId: record.sessionId,
      channel: record.channel,
      hooks: recorder.hooks,
      // The store first: a listener of this process (a terminal) sees only what is recorded.
      onEvent: extraListener ? (event) => (recorder.onEvent(event), extraListener(event)) : recorder.onEvent,
      ...(extras.prepareMessages ? { prepareMessages: extras.prepareMessages } : {}),
      ...(extras.askForNextMessage !== undefined ? { askForNextMessage: extras.askForNextMessage } : {}),
      ...(extras.trajectoryPath ? { trajectoryPath: extras.trajectoryPath } : {}),
      ...(extras.agent ? { agent: extras.agent } : {}),
      ...(extras.worker ? { worker: extras.worker } : {}),
      ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
      ...(system ? { system } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.interactionTimeoutMs ? { interactionTimeoutMs: options.interactionTimeoutMs } : {}),
      ...(options.executionTimeoutMs ? { executionTimeoutMs: options.executionTimeoutMs } : {}),
      ...(fresh ? (history.length ? { history } : {}) : { resumeFrom: { state, interruptedCallIds: interrupted } }),
    };
    const loop = startLoop(record.task, loopOptions);
    live.broker = broker;
    live.recorder = recorder;
    if (extras.holdWhileWaiting) live.hold = true;
    live.handle = { runId: record.id, run: loop, outcome: this.settle(record.id, live, loop) };
    this.live.set(record.id, live);
    return live.handle;
  }

  private async settle(runId: string, live: LiveRun, loop: Run): Promise<DurableOutcome> {
    const done = (async (): Promise<DurableOutcome> => {
      const outcome = await loop.outcome;
      this.disarmIdle(live);
      try {
        if (!live.recorder.leaseLost) await live.recorder.finish(outcome);
      } catch {
        // Lease lost while finishing: the new owner has the run; this process wrote nothing more.
      }
      if (this.live.get(runId) === live) this.live.delete(runId);
      if (live.recorder.leaseLost) return { ...outcome, leaseLost: true };
      if (this.closed) return outcome;
      if (outcome.status === 'suspended' && !this.closed) await this.resumeIfAnswered(runId, outcome.pendingInteractionId, live.wake);
      return outcome;
    })();
    this.settling.add(done);
    void done.finally(() => this.settling.delete(done)).catch(() => {});
    return done;
  }

  /**
   * An answer may land while the run is being suspended; whoever sees it last resumes the run
   * (the responder, if the run was already suspended; this process otherwise).
   */
  private async resumeIfAnswered(runId: string, interactionId: string | undefined, wake: LiveRun['wake']): Promise<void> {
    let answered = wake === 'answered';
    if (!answered && interactionId) {
      const interaction = await this.store.getInteraction(interactionId);
      answered = interaction !== undefined && interaction.status !== 'pending';
    }
    if (!answered) return;
    try {
      await this.resume(runId);
    } catch (error) {
      if (!(error instanceof RunBusyError || error instanceof RunFinishedError || error instanceof RunRebuildError || error instanceof RunLeftError)) throw error;
    }
  }

  private armIdle(live: LiveRun): void {
    const ms = this.options.idleSuspendMs ?? 300_000;
    this.disarmIdle(live);
    if (live.hold) return;
    // Never synchronously: the broker registers its abort listener right after the request is saved.
    live.idleTimer = setTimeout(() => live.handle?.run.suspend(ms === 0 ? 'nobody is there to answer' : `no answer within ${Math.round(ms / 1000)} s`), ms);
  }

  private disarmIdle(live: LiveRun): void {
    if (live.idleTimer) clearTimeout(live.idleTimer);
    live.idleTimer = undefined;
  }
}

function loopMode(options: StoredRunOptions): RunOptions['mode'] {
  if (options.mode === 'batch') return { type: 'batch' };
  if (options.mode === 'non-interactive') return { type: 'non-interactive', autoResponse: options.autoResponse ?? 'allow' };
  return { type: 'interactive' };
}
