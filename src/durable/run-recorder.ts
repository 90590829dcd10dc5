import type { RunEvent } from '../events/index.js';
import type { InteractionPersistence, InteractionRequest, InteractionResponse, PriorOutcome } from '../interaction/index.js';
import type { LoopHooks, LoopState, RunOutcome } from '../loop/index.js';
import { isNextMessageRequest, isStoreFault, LeaseLostError, type StoreDownError, type StoreFullError, type AuditEntry, type RunWrite, type StepWrite, type Store, type StoredRunStatus } from '../store/index.js';
import { splitLoopState, type LogPosition } from './checkpoint-codec.js';

export interface RecorderOptions {
  store: Store;
  runId: string;
  owner: string;
  /** The claim this incarnation drives (RunRecord.epoch): every write is fenced by it. */
  epoch?: number;
  position: LogPosition;
  /** Events between checkpoints are written this long after they happen (live SSE), ms. */
  flushDelayMs?: number;
  /** A request was committed and the run now waits for it. */
  onWaiting?(request: InteractionRequest): void;
  /** Another instance took the run over: stop driving it. */
  onLeaseLost?(error: LeaseLostError): void;
  /**
   * A write failed because the store is down or full: this incarnation writes nothing more (what it
   * had not committed is lost, as in a crash) and must stop; the run is resumed from its last commit
   * once the store is back.
   */
  onStoreFault?(error: StoreDownError | StoreFullError): void;
  /**
   * The run is resumed from the store: its asks may have been answered already. Calls whose intent
   * an earlier incarnation recorded are listed (an ask inside such a call is consumed at once).
   */
  resumed?: { startedCalls: readonly string[] };
  /**
   * The run is released as soon as it asks (nobody answers here: no responder, no idle wait): a new
   * request is not committed on its own but with the run's next write — its suspension — so the
   * step before the ask, the request and the release are one commit. `'next-message'`: only at an
   * ask for the next message (the run is idle and released at once: RunnerOptions.idleRunSuspendMs 0).
   */
  releaseAtAsk?: boolean | 'next-message';
  /**
   * This incarnation resumes a released run on an answer, without a commit of its own: its first
   * write claims the run (from `epoch`; `RecorderOptions.epoch` is `epoch + 1`) and records the
   * answer, and the loop gets the answer from here. Until that write, nothing is the run's.
   */
  claim?: { epoch: number; leaseMs: number; request: InteractionRequest; response: InteractionResponse };
}

/** settledBefore: the store has no such request (a resumed run asks something new). */
const ABSENT = Symbol('absent');

/** The recorder was closed (its runner shut down): this incarnation writes nothing more. */
export class RecorderClosedError extends Error {
  constructor(readonly runId: string) {
    super(`Run ${runId}: this process stopped recording it; nothing was written.`);
    this.name = 'RecorderClosedError';
  }
}

/**
 * Follows one live run into the store: buffers its events and writes them, in order, with each
 * checkpoint, tool intent and interaction; commits requests before anyone sees them; claims answers
 * atomically. All writes of a run go through one queue, so the log never reorders, and every write
 * is fenced by the claim this incarnation holds: once another claim exists (another instance, or a
 * newer incarnation here), the store refuses it (LeaseLostError) and this incarnation stops quietly.
 */
export class RunRecorder implements InteractionPersistence {
  private buffer: RunEvent[] = [];
  /** The latest checkpoint and what it adds to the logs, not yet committed (see hooks.checkpoint). */
  private staged: StepWrite | undefined;
  /** Requests not committed yet (releaseAtAsk): they ride with the next write, before anyone sees them. */
  private stagedAsks: InteractionRequest[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | undefined;
  private position: LogPosition;
  private readonly reported = new Set<string>();
  /** The next-message asks this incarnation saved: a run released while one is pending is `idle`. */
  private readonly nextMessageAsks = new Set<string>();
  leaseLost: LeaseLostError | undefined;
  /** A write failed on the store (down or full): nothing after it may be written by this incarnation. */
  storeFault: StoreDownError | StoreFullError | undefined;
  private closed = false;
  /** Calls whose intent is recorded: past that point an ask's outcome must be consumed before the tool goes on. */
  private readonly intents: Set<string>;
  /** Calls of model turns this incarnation made (resumed runs only): their asks are new. */
  private readonly ownCalls = new Set<string>();
  /** RecorderOptions.claim until the write that carries it commits. */
  private pendingClaim: RecorderOptions['claim'];
  /** Settles when the claim is committed (at once without one), or fails with why it was not. */
  readonly claimed: Promise<void>;
  private settleClaim: { resolve(): void; reject(error: unknown): void } | undefined;
  /** The claim's answer went to the loop already (it is handed over once). */
  private claimAnswerTaken = false;
  /** Answers the loop took (deferAnswer), recorded with the next write; each settles with it. */
  private stagedAnswers: { interactionId: string; response: InteractionResponse; resolve(): void; reject(error: unknown): void }[] = [];
  /** A write carrying answers was refused (answered elsewhere first): the run must be driven again. */
  refused = false;

  constructor(private readonly options: RecorderOptions) {
    this.position = options.position;
    this.intents = new Set(options.resumed?.startedCalls ?? []);
    this.pendingClaim = options.claim;
    this.claimed = options.claim
      ? new Promise<void>((resolve, reject) => {
          this.settleClaim = { resolve, reject };
        })
      : Promise.resolve();
    // Awaited by whoever answered; never an unhandled rejection when nobody does.
    this.claimed.catch(() => {});
  }

  /** Whether this incarnation's first write will claim the run with the answer to `interactionId`. */
  claimsWith(interactionId: string): boolean {
    return this.options.claim?.request.id === interactionId;
  }

  /** The run is not this incarnation's until its claim commits (maintenance must not count it lost). */
  get claiming(): boolean {
    return this.pendingClaim !== undefined;
  }

  get runId(): string {
    return this.options.runId;
  }

  /** Who writes: the owner and its claim. */
  private get fence(): { owner: string; epoch?: number } {
    return this.options.epoch === undefined ? { owner: this.options.owner } : { owner: this.options.owner, epoch: this.options.epoch };
  }

  /** This incarnation writes no more (its runner closed, its final write is queued, or its claim is gone). */
  get stopped(): boolean {
    return this.closed || this.leaseLost !== undefined || this.storeFault !== undefined;
  }

  /** The loop's onEvent: synchronous, in seq order. */
  readonly onEvent = (event: RunEvent): void => {
    // A late event of an ended incarnation (a lifecycle change while unwinding) would be refused by
    // the store's claim fence; it is not even buffered, so no write is scheduled after the end.
    if (this.stopped) return;
    this.buffer.push(event);
    this.armFlush();
  };

  /** Buffered events and a staged step are written this long after they appear, at the latest. */
  private armFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      // A request staged for the release at its ask: the release was queued (setImmediate, by
      // onWaiting) when the request was staged, and commits it with the suspension. A timer already
      // due in the same timers phase would commit it on its own first: one commit more per cycle
      // (2.5 instead of 2 in bench/durable.ts). Wait one check phase: by then the run was released
      // (nothing is left to write) or it was not (answered live) and this writes.
      if (this.stagedAsks.length) setImmediate(() => void this.flush().catch(() => {}));
      else void this.flush().catch(() => {});
    }, this.options.flushDelayMs ?? 20);
  }

  readonly hooks: LoopHooks = {
    // Taken from the live state now (the loop moves on), but not committed on its own: a step's
    // checkpoint rides with the run's next commit — the next tool intent, request or final status —
    // or is written by the flush timer, whichever comes first. One commit per step, not four.
    checkpoint: (state: LoopState) => {
      if (this.stopped) return;
      const parts = splitLoopState(state, this.position);
      this.position = parts.position;
      // Calls of a model turn this incarnation made (appended past the log it was resumed from).
      if (this.options.resumed && parts.messages && !parts.messages.replace) {
        for (const m of parts.added) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) this.ownCalls.add(c.id);
      }
      const step: StepWrite = { checkpoint: parts.checkpoint };
      if (parts.messages) step.messages = parts.messages;
      if (parts.toolHistory) step.toolHistory = parts.toolHistory;
      let toolResults: { toolCallId: string; result: { content: string; isError: boolean } }[] | undefined;
      const { turnResults } = state;
      for (const toolCallId in turnResults) {
        if (this.reported.has(toolCallId)) continue;
        this.reported.add(toolCallId);
        const result = turnResults[toolCallId]!;
        // The audit row gets the text, which names any images; their bytes are in the message log once.
        (toolResults ??= []).push({ toolCallId, result: { content: result.content, isError: result.isError } });
      }
      if (toolResults) step.toolResults = toolResults;
      this.staged = mergeStep(this.staged, step);
      this.armFlush();
    },
    // Committed before the side effect starts: a crash after this point is reported, never re-run.
    toolIntent: (call) => {
      this.intents.add(call.toolCallId);
      const events = this.take();
      const step = this.takeStep();
      return this.writeRun({ events, ...step, toolIntent: { ...call } });
    },
  };

  /**
   * A permission decision or answer of the run's gate (stageRunAudit), committed with the run's next
   * write: the call's intent, its request, the step's checkpoint — at the latest the flush timer's,
   * which the decision's own event arms anyway. False when this incarnation writes nothing more: the
   * caller appends the row on its own. A write that fails takes its rows back to appendAudit
   * (spillAudit), so a refused write loses none.
   */
  stageAudit(entry: AuditEntry): boolean {
    if (this.stopped) return false;
    this.staged = mergeStep(this.staged, { audit: [entry] });
    this.armFlush();
    return true;
  }

  /**
   * Commits the request with the events before it; the store names it as the run's pending request
   * (and makes the run `idle` for a next-message ask) in that same transaction.
   */
  async save(request: InteractionRequest): Promise<(PriorOutcome & { announce?: boolean }) | undefined> {
    if (isNextMessageRequest(request)) this.nextMessageAsks.add(request.id);
    const settled = await this.settledBefore(request);
    if (settled && settled !== ABSENT) return settled;
    // A request that cannot be in the store yet (a fresh run's, or one a resumed run looked up and
    // did not find) waits for the suspension's write when the run is released at its ask.
    const fresh = !this.options.resumed || settled === ABSENT;
    const release = this.options.releaseAtAsk === true || (this.options.releaseAtAsk === 'next-message' && isNextMessageRequest(request));
    if (release && fresh && !this.stopped) {
      this.stagedAsks.push(request);
      this.options.onWaiting?.(request);
      return undefined;
    }
    // The claim rides with a run write only: it goes first, with what is buffered (rarely: an answer
    // that leads straight to another ask in a run kept in memory while it waits).
    if (this.pendingClaim || this.stagedAnswers.length) await this.flush(true);
    const events = this.take();
    const step = this.takeStep();
    const saved = this.enqueue(() => this.options.store.saveInteraction(request, { ...this.fence, events, ...(step ? { step } : {}) }));
    this.spillAuditIfFailed(saved, step?.audit);
    const prior = await saved;
    if (!prior || prior.status === 'pending') this.options.onWaiting?.(prior?.request ?? request);
    return prior;
  }

  /**
   * A resumed run asks again what it asked before it was released; usually the answer is in the
   * store. For an ask made before its call's intent (a permission), that outcome is returned with
   * a read, and marking it consumed rides with the next commit (the call's intent): one commit
   * fewer per approval. A crash before that commit leaves it unconsumed, as if never returned.
   */
  private async settledBefore(request: InteractionRequest): Promise<(PriorOutcome & { announce?: boolean }) | typeof ABSENT | undefined> {
    const claim = this.options.claim;
    if (claim && !this.claimAnswerTaken && request.id === claim.request.id && !this.stopped) {
      // The answer this incarnation was resumed with: recorded (consumed) by the claim's write.
      this.claimAnswerTaken = true;
      return { status: 'answered', request: claim.request, response: claim.response, announce: true };
    }
    if (!this.options.resumed || this.stopped) return undefined;
    if (request.toolCallId && this.intents.has(request.toolCallId)) return undefined;
    // A call this incarnation's own model turn made cannot have a stored request: a request is
    // committed with (or after) the checkpoint that holds its call, so one from an earlier
    // incarnation means the call is in the log this one was resumed from. One read fewer per cycle.
    if (request.toolCallId && this.ownCalls.has(request.toolCallId)) return ABSENT;
    let prior: Awaited<ReturnType<Store['getInteraction']>>;
    try {
      prior = await this.options.store.getInteraction(request.id);
    } catch (error) {
      // A read the run's path depends on failed on the store: the incarnation ends here as at a
      // write that failed (the loop would otherwise fail the run for a store that comes back).
      if (isStoreFault(error)) this.noteStoreFault(error);
      throw error;
    }
    if (!prior) return ABSENT;
    if (prior.runId !== this.runId || prior.status === 'pending') return undefined;
    const announce = !prior.consumed;
    if (announce) {
      this.staged = mergeStep(this.staged, { consumeInteractions: [prior.id] });
      this.armFlush();
    }
    if (prior.status === 'answered') return { status: 'answered', request: prior.request, response: prior.response!, announce };
    return { status: prior.status, request: prior.request, reason: prior.reason ?? prior.status, announce };
  }

  /**
   * The loop took an answer another process stored while this incarnation held the run (an external
   * agent's ask): marking it consumed rides with the next write, as for an answer a resumed run finds.
   */
  consumeStored(interactionId: string): void {
    if (this.stopped) return;
    this.staged = mergeStep(this.staged, { consumeInteractions: [interactionId] });
    this.armFlush();
  }

  async claimAnswer(request: InteractionRequest, response: InteractionResponse): Promise<void> {
    // The loop is waiting in this process: the answer is handed to running code at once — only while
    // this incarnation still holds the run (otherwise the caller stores it for the current driver).
    if (this.leaseLost) throw this.leaseLost;
    if (this.storeFault) throw this.storeFault;
    if (this.closed) throw new RecorderClosedError(this.runId);
    try {
      await this.options.store.claimAnswer(request.id, response, { consumed: true, fence: this.fence });
    } catch (error) {
      this.noteFailure(error);
      throw error;
    }
  }

  /**
   * The answer goes to the loop at once and is recorded with its next write — the call's intent,
   * usually, or the flush timer's — instead of a commit of its own: one commit fewer per approval,
   * and whoever answered hears back when it is durable.
   */
  deferAnswer(request: InteractionRequest, response: InteractionResponse): Promise<void> {
    if (this.leaseLost) return Promise.reject(this.leaseLost);
    if (this.storeFault) return Promise.reject(this.storeFault);
    if (this.closed) return Promise.reject(new RecorderClosedError(this.runId));
    const committed = new Promise<void>((resolve, reject) => this.stagedAnswers.push({ interactionId: request.id, response, resolve, reject }));
    this.armFlush();
    return committed;
  }

  async close(requestId: string, status: 'expired' | 'cancelled', reason: string): Promise<void> {
    // Called unawaited by the broker (timers, aborts): never rejects. A stopped incarnation leaves the
    // request to the run's current driver.
    if (this.stopped) return;
    try {
      await this.options.store.closeInteraction(requestId, status, reason, this.fence);
    } catch (error) {
      this.noteFailure(error);
    }
  }

  /** Writes the buffered events and the staged step now (also on a short timer, for live viewers). */
  flush(force = false): Promise<void> {
    const events = this.take();
    const step = this.takeStep();
    if (events.length === 0 && !step && !this.stagedAnswers.length && !(force && this.pendingClaim)) return this.queue.then(() => undefined);
    return this.writeRun({ events, ...step });
  }

  /** Marks calls the resumed run reports as interrupted. */
  markInterrupted(toolCallIds: readonly string[]): Promise<void> {
    if (toolCallIds.length === 0) return Promise.resolve();
    return this.writeRun({ interruptedToolCalls: toolCallIds });
  }

  /**
   * The run ended or was suspended: the last events and the status, the lease released and, for a
   * finished run, its pending requests closed (nothing may stay answerable) — one fenced write.
   */
  async finish(outcome: RunOutcome): Promise<void> {
    const finished = outcome.status !== 'suspended';
    // Released while waiting for the person's next message: done with its task, not blocked on an ask.
    const idle = !finished && outcome.pendingInteractionId !== undefined && this.nextMessageAsks.has(outcome.pendingInteractionId);
    const status: StoredRunStatus = idle ? 'idle' : outcome.status;
    const events = this.take();
    const step = this.takeStep();
    const write = this.writeRun({
      events,
      ...step,
      run: {
        status,
        release: true,
        pendingInteractionId: outcome.pendingInteractionId ?? null,
        ...(finished ? { finalText: outcome.finalText, error: outcome.error ?? null, closeInteractions: `the run ended (${status})` } : {}),
      },
    });
    this.closed = true;
    await write;
  }

  /**
   * Stops recording (the runner is shutting down without releasing the run): buffered events are
   * dropped, later writes are refused, and this resolves once the writes already queued are done —
   * so nothing touches the store after the runner closed.
   */
  async stop(): Promise<void> {
    this.closed = true;
    this.failClaim(new RecorderClosedError(this.runId));
    for (const a of this.stagedAnswers.splice(0)) a.reject(new RecorderClosedError(this.runId));
    this.take();
    const dropped = this.takeStep()?.audit;
    await this.queue;
    // Decisions already made are kept: their rows are appended on their own, as any row of a run driven elsewhere.
    if (dropped?.length) await this.spillAudit(dropped);
  }

  /** The staged step (checkpoint, log entries, results) for the commit being made now. */
  private takeStep(): StepWrite | undefined {
    const step = this.staged;
    this.staged = undefined;
    if (this.stagedAsks.length === 0) return step;
    // The requests go with whatever commits first (the suspension, or the flush timer before it).
    const asks = this.stagedAsks;
    this.stagedAsks = [];
    // The staged step is this recorder's own object (see mergeStep): the asks join it in place.
    if (!step) return { asks };
    step.asks = asks;
    return step;
  }

  private take(): RunEvent[] {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    const events = this.buffer;
    this.buffer = [];
    return events;
  }

  /** A run write of this incarnation, fenced by its claim; the first one carries RecorderOptions.claim. */
  private writeRun(part: Omit<RunWrite, 'runId' | 'owner' | 'epoch'>): Promise<void> {
    const written = this.writeRunNow(part);
    this.spillAuditIfFailed(written, part.audit);
    return written;
  }

  private writeRunNow(part: Omit<RunWrite, 'runId' | 'owner' | 'epoch'>): Promise<void> {
    return this.enqueue(async () => {
      const claim = this.pendingClaim;
      // Taken when the write is made, not when it was queued: answers given meanwhile ride too.
      const answers = this.stagedAnswers.splice(0);
      if (!claim && answers.length === 0) return this.options.store.write({ runId: this.runId, ...this.fence, ...part });
      try {
        await this.options.store.write({
          runId: this.runId,
          ...this.fence,
          ...part,
          ...(claim ? { claim: { epoch: claim.epoch, leaseMs: claim.leaseMs, answer: { interactionId: claim.request.id, response: claim.response } } } : {}),
          ...(answers.length ? { answers: answers.map(({ interactionId, response }) => ({ interactionId, response })) } : {}),
        });
      } catch (error) {
        // The store is down or full: the answers were not recorded (or, with the connection lost
        // during COMMIT, maybe were: asked again, they are refused as answered). They fail with
        // the fault, and the run is resumed from the store once it is back.
        if (isStoreFault(error)) {
          for (const a of answers) a.reject(error);
          this.failClaim(error);
          throw error;
        }
        // Claimed, answered or taken over by someone else first: what the loop took here was not
        // the run's; it writes nothing more, and an answer stored elsewhere needs it driven again.
        for (const a of answers) a.reject(error);
        this.failClaim(error);
        if (!(error instanceof LeaseLostError) && answers.length) this.refused = true;
        throw error instanceof LeaseLostError ? error : new LeaseLostError(this.runId, this.options.owner, null);
      }
      for (const a of answers) a.resolve();
      if (claim) {
        this.pendingClaim = undefined;
        this.settleClaim?.resolve();
      }
    });
  }

  /** Audit rows of a write that was refused or failed: appended on their own (never lost with it). */
  private spillAuditIfFailed(written: Promise<unknown>, audit: readonly AuditEntry[] | undefined): void {
    if (audit?.length) written.catch(() => this.spillAudit(audit));
  }

  private async spillAudit(audit: readonly AuditEntry[]): Promise<void> {
    // Best effort, as every audit row was before runs wrote their own: a failure is not the run's.
    await Promise.allSettled(audit.map((entry) => this.options.store.appendAudit(entry)));
  }

  private failClaim(error: unknown): void {
    if (!this.pendingClaim) return;
    this.pendingClaim = undefined;
    this.settleClaim?.reject(error);
  }

  private enqueue<T>(write: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new RecorderClosedError(this.runId));
    const result = this.queue.then(() => {
      if (this.leaseLost) throw this.leaseLost;
      if (this.storeFault) throw this.storeFault;
      return write();
    });
    this.queue = result.catch((error: unknown) => this.noteFailure(error));
    return result;
  }

  private noteFailure(error: unknown): void {
    if (isStoreFault(error)) this.noteStoreFault(error);
    else this.noteLeaseLost(error);
  }

  /**
   * The first write that failed on the store ends this incarnation, as a crash at that point would:
   * a later write could land without the one that failed (a gap in the log, a result without its
   * step), so none is made. Answers waiting for a commit fail with the fault.
   */
  private noteStoreFault(error: StoreDownError | StoreFullError): void {
    if (this.storeFault || this.leaseLost) return;
    this.storeFault = error;
    this.failClaim(error);
    for (const a of this.stagedAnswers.splice(0)) a.reject(error);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.options.onStoreFault?.(error);
  }

  private noteLeaseLost(error: unknown): void {
    if (error instanceof LeaseLostError) {
      this.failClaim(error);
      for (const a of this.stagedAnswers.splice(0)) a.reject(error);
    }
    if (error instanceof LeaseLostError && !this.leaseLost) {
      this.leaseLost = error;
      this.options.onLeaseLost?.(error);
    }
  }
}

/**
 * Two staged steps as one write: the later checkpoint, the log entries of both (the later ones
 * start where the earlier ones end; a compaction's rewrite replaces all), the results of both.
 */
export function mergeStep(earlier: StepWrite | undefined, later: StepWrite): StepWrite {
  if (!earlier) return later;
  // Built field by field (conditional spreads copy at run time): a step is merged up to three times per cycle.
  const merged: StepWrite = {};
  const checkpoint = later.checkpoint ?? earlier.checkpoint;
  if (checkpoint) merged.checkpoint = checkpoint;
  const messages = mergeLog(earlier.messages, later.messages);
  if (messages) merged.messages = messages;
  const toolHistory = mergeLog(earlier.toolHistory, later.toolHistory);
  if (toolHistory) merged.toolHistory = toolHistory;
  const toolResults = concat(earlier.toolResults, later.toolResults);
  if (toolResults) merged.toolResults = toolResults;
  const consumeInteractions = concat(earlier.consumeInteractions, later.consumeInteractions);
  if (consumeInteractions) merged.consumeInteractions = consumeInteractions;
  const audit = concat(earlier.audit, later.audit);
  if (audit) merged.audit = audit;
  return merged;
}

/** Both lists in order, as a new array; undefined when both are empty. */
function concat<T>(earlier: readonly T[] | undefined, later: readonly T[] | undefined): T[] | undefined {
  if (!earlier?.length) return later?.length ? [...later] : undefined;
  return later?.length ? [...earlier, ...later] : [...earlier];
}

type LogPart = { from: number; items: readonly unknown[]; replace?: boolean };

function mergeLog<T extends LogPart>(earlier: T | undefined, later: T | undefined): T | undefined {
  if (!earlier || !later) return later ?? earlier;
  if (later.replace) return later;
  // The later part starts at or before the end of the earlier one (it never leaves a gap).
  const items = earlier.items.slice(0, Math.max(0, later.from - earlier.from));
  for (const item of later.items) items.push(item);
  return { ...earlier, items };
}
