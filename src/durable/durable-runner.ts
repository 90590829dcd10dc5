import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { FINISHED_STATUSES, RunBusyError, RunNotFoundError, type InteractionRecord, type RunRecord, type Store, type Unsubscribe } from '../store/index.js';
import { z } from 'zod';
import { InvalidInputError } from '../errors/index.js';
import { RunFinishedError } from './errors.js';
import { parseStoredOptions } from './stored-options.js';
import { respond, onNotification, pollWaiting } from './answer-routing.js';
import { routeRunAudit } from './audit-routing.js';
import { endLeaseIfDead, registerOwner } from './dead-owners.js';
import { driveRun, resumeRun } from './drive-run.js';
import { expireDue, maintain, recover } from './maintenance.js';
import { RunnerState, type DurableOutcome, type DurableRunHandle, type DurableRunnerOptions, type RecoverResult, type RespondResult, type StartOptions } from './runner-state.js';

export type { Delivery, DurableOutcome, DurableRunHandle, DurableRunnerOptions, RecoverResult, RespondResult, StartOptions } from './runner-state.js';

/** DurableRunnerOptions.maxWaitingInMemory: a count of runs, 0 or more. */
export const maxWaitingInMemorySchema = z.number().int('must be a whole number').nonnegative('must be 0 or more').max(Number.MAX_SAFE_INTEGER);

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
  private readonly state: RunnerState;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: Promise<Unsubscribe> | undefined;
  private maintaining: Promise<unknown> | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  /** Undoes this runner's audit route (routeRunAudit). */
  private readonly unrouteAudit: () => void;

  constructor(private readonly options: DurableRunnerOptions) {
    this.store = options.store;
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.leaseMs = options.leaseMs ?? 30_000;
    if (options.maxWaitingInMemory !== undefined) {
      const parsed = maxWaitingInMemorySchema.safeParse(options.maxWaitingInMemory);
      if (!parsed.success) throw new InvalidInputError(`maxWaitingInMemory ${parsed.error.issues[0]!.message} (got ${String(options.maxWaitingInMemory)})`, { field: 'maxWaitingInMemory' });
    }
    this.state = new RunnerState(this.store, options, this.instanceId, this.leaseMs, this);
    // The gates of the runs driven here write their audit rows with the runs' own writes.
    this.unrouteAudit = routeRunAudit(this.store, (runId, entry) => this.state.live.get(runId)?.recorder.stageAudit(entry) ?? false);
  }

  /** Starts listening for wake-ups and running maintenance (leases, expiry, takeover). */
  async open(): Promise<this> {
    await registerOwner(this.state);
    this.unsubscribe ??= this.store.subscribe('*', (n) => onNotification(this.state, n));
    await this.unsubscribe;
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.options.maintenanceIntervalMs ?? Math.max(50, Math.floor(this.leaseMs / 3)));
      this.timer.unref();
    }
    const pollMs = this.options.wakePollMs ?? (this.store.backend === 'sqlite' ? 250 : 500);
    if (!this.pollTimer && pollMs > 0) {
      this.pollTimer = setInterval(() => pollWaiting(this.state, false), pollMs);
      this.pollTimer.unref();
    }
    return this;
  }

  /** Runs this process drives now. */
  liveRunIds(): string[] {
    return [...this.state.live.keys()];
  }

  handle(runId: string): DurableRunHandle | undefined {
    return this.state.live.get(runId)?.handle;
  }

  /** Creates a run and drives it here. */
  async start(task: string, options: StartOptions): Promise<DurableRunHandle> {
    const record = await this.create(task, options, true);
    return driveRun(this.state, record);
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
    if (own) await registerOwner(this.state);
    return this.store.createRun(
      { id, userId: userId ?? 'local', sessionId: sessionId ?? id, channel: channel ?? 'sdk', task, options: stored },
      own ? { id: this.instanceId, leaseMs: this.leaseMs } : null,
    );
  }

  /**
   * Resumes a run here from its last checkpoint: a suspended one, or a running one whose owner's
   * lease expired or whose owner (a process of this host) died. Throws RunBusyError while a live
   * instance drives it, RunFinishedError once done.
   */
  resume(runId: string): Promise<DurableRunHandle> {
    // Driven or being rebuilt here: the same promise as that resume's (nothing to look up).
    if (this.state.live.has(runId) || this.state.starting.has(runId)) return resumeRun(this.state, runId);
    return this.resumeFromStore(runId);
  }

  private async resumeFromStore(runId: string): Promise<DurableRunHandle> {
    await registerOwner(this.state);
    const run = await this.store.getRun(runId);
    if (run?.owner) await endLeaseIfDead(this.state, run.owner);
    return resumeRun(this.state, runId);
  }

  /**
   * Answers a stored request. The response is validated against the request, the first valid
   * answer wins atomically (a later one gets InteractionAlreadyAnsweredError saying who and
   * when), and the run resumes: here when this process drives it or nobody does, through a
   * notification when another live instance does. `known`: the request as the caller just read it
   * (a server's route looks it up to check access), not read again; an answer that raced that read
   * is refused by the store's compare-and-set all the same.
   */
  async respond(interactionId: string, raw: unknown, known?: InteractionRecord): Promise<RespondResult> {
    await registerOwner(this.state);
    return respond(this.state, interactionId, raw, known);
  }

  /**
   * Crash recovery and takeover: expires overdue requests, then resumes here every run that
   * needs a driver — running runs whose owner's lease expired (their in-flight tool calls get an
   * "interrupted by restart" result), queued runs, and suspended runs whose request was answered,
   * expired or cancelled while nobody drove them.
   */
  async recover(options: { limit?: number } = {}): Promise<RecoverResult> {
    await registerOwner(this.state);
    return recover(this.state, options);
  }

  /** Applies timeout behaviour to overdue requests: a live run gets it now, a suspended one on resume. */
  expireDue(): Promise<string[]> {
    return expireDue(this.state);
  }

  /** Cancels a run wherever it is: here, on its live owner (notified), or in the store. */
  async cancel(runId: string, reason = 'the run was cancelled'): Promise<'live' | 'notified' | 'stored'> {
    const live = this.state.live.get(runId);
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
      // Its owner died on this host: nobody would hear the wake; the lease ends and the cancel lands.
      if (run.owner && (await endLeaseIfDead(this.state, run.owner))) return this.cancel(runId, reason);
      await this.store.publish({ type: 'wake', runId, reason: 'cancel' });
      return 'notified';
    }
  }

  /** Releases a live run from memory; it waits in the store for its answer. */
  async suspend(runId: string, reason = 'nobody is there to answer'): Promise<DurableOutcome | undefined> {
    const live = this.state.live.get(runId);
    if (!live) return undefined;
    live.handle.run.suspend(reason);
    return live.handle.outcome;
  }

  /**
   * Stops maintenance and releases every live run (suspends them) so another process can take over.
   * `suspend: false` leaves them as a crash would (running, under this instance's lease, to be taken
   * over when it expires): the loops stop here without writing anything more. Either way, when this
   * resolves nothing of this runner touches the store any more (the store can be closed).
   */
  async close(options: { suspend?: boolean } = {}): Promise<void> {
    this.state.closed = true;
    this.unrouteAudit();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await this.maintaining;
    await this.state.polling;
    if (this.state.faultTimer) clearTimeout(this.state.faultTimer);
    this.state.faultTimer = undefined;
    await this.state.faultRetry;
    // Runs being rebuilt become live (or fail) first, so they are stopped too.
    await Promise.allSettled([...this.state.starting.values()]);
    if (options.suspend !== false) {
      await Promise.all([...this.state.live.keys()].map((id) => this.suspend(id, 'the process is shutting down')));
    } else {
      await Promise.all(
        [...this.state.live.values()].map(async (live) => {
          await live.recorder.stop();
          live.handle.run.suspend('the process is shutting down');
        }),
      );
    }
    while (this.state.settling.size) await Promise.allSettled([...this.state.settling]);
    await Promise.all([...this.state.live.values()].map((live) => live.recorder.stop()));
    const unsubscribe = await this.unsubscribe;
    await unsubscribe?.();
    // Runs still naming this owner are judged by their lease from now on (as a crash leaves them).
    if (this.state.ownerRegistration) await this.store.forgetOwner(this.instanceId).catch(() => {});
  }

  /** One maintenance pass at a time: under load a tick can outlast the interval. */
  private tick(): void {
    if (this.maintaining || this.state.closed) return;
    this.maintaining = maintain(this.state)
      // A failed pass (the database unreachable a moment) is retried on the next tick.
      .catch(() => {})
      .finally(() => {
        this.maintaining = undefined;
      });
  }

}
