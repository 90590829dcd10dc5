import {
  InteractionBroker,
  batchResponder,
  type BrokerEvent,
  createAutoResponder,
  type InteractionPersistence,
  type InteractionRequest,
  type InteractionResponse,
} from '../interaction/index.js';
import { run as startLoop, type Run, type RunOptions } from '../loop/index.js';
import type { Message } from '../model/types.js';
import { FINISHED_STATUSES, isNextMessageRequest, isStoreFault, LeaseLostError, RunBusyError, RunNotFoundError, type RunRecord, type RunResumeState, type RunWrite, type Store } from '../store/index.js';
import { SageError, formatZodError } from '../errors/index.js';
import { initialLoopState, joinLoopState, positionOf } from './checkpoint-codec.js';
import { RunFinishedError, RunLeftError, RunRebuildError } from './errors.js';
import { RunRecorder } from './run-recorder.js';
import { resumeWhenStoreBack } from './store-fault-resume.js';
import type { DurableOutcome, DurableRunHandle, LiveRun, RunnerState } from './runner-state.js';
import type { LoopExtras } from './runtime.js';
import type { z } from 'zod';
import { storedRunOptionsSchema, type StoredRunOptions } from './stored-options.js';

// Driving a run here: claim it, rebuild what is not in the store, start its loop, follow it into
// the store, and settle it when it ends or is released.

/**
 * Marks a claimed run that cannot be rebuilt here as failed — its `run.failed` event, its status
 * and error, its open requests closed, the claim released — in one write fenced by the claim, and
 * reports it. Returns the error for the caller to throw (LeaseLostError when the run was claimed
 * again meanwhile: that claim decides, nothing was written).
 */
export async function failUnbuildable(state: RunnerState, record: RunRecord, error: RunRebuildError): Promise<Error> {
  const failure = { code: error.code, message: error.message };
  try {
    const seq = (await state.store.lastEventSeq(record.id)) + 1;
    await state.store.write({
      runId: record.id,
      owner: state.instanceId,
      epoch: record.epoch,
      events: [{ seq, runId: record.id, type: 'run.failed', at: new Date().toISOString(), data: failure }],
      run: { status: 'failed', release: true, pendingInteractionId: null, error: failure, closeInteractions: `the run failed (${error.code})` },
    });
  } catch (writeError) {
    if (writeError instanceof LeaseLostError) return writeError;
    throw writeError;
  }
  if (state.options.onRunFailed) state.options.onRunFailed(error);
  else process.stderr.write(`sage: ${error.message} It was marked failed.\n`);
  return error;
}

/** Releases a claimed run that must not be driven now, writing nothing else; returns the error to throw. */
export async function leave(state: RunnerState, record: RunRecord, error: RunLeftError): Promise<Error> {
  try {
    await state.store.write({ runId: record.id, owner: state.instanceId, epoch: record.epoch, run: { release: true } });
  } catch (writeError) {
    if (writeError instanceof LeaseLostError) return writeError;
    throw writeError;
  }
  return error;
}

/**
 * Stored options already parsed in this process, by their exact JSON: every resume of a run (and
 * runs started alike) parses the same options again otherwise. The parse is a pure function of
 * that text, so nothing can go stale; what the options point at (settings files, the model) is
 * still read by the runtime on each rebuild. Options with a history are not kept: they are one
 * run's, large, and the loop must not share their messages with another run.
 */
const parsedOptions = new Map<string, StoredRunOptions>();
const PARSED_OPTIONS_MAX = 256;

function parseOptionsCached(value: unknown): { success: true; data: StoredRunOptions } | { success: false; error: z.ZodError } {
  const history = typeof value === 'object' && value !== null && 'history' in value;
  const key = history ? undefined : JSON.stringify(value);
  const hit = key === undefined ? undefined : parsedOptions.get(key);
  if (hit) return { success: true, data: hit };
  const parsed = storedRunOptionsSchema.safeParse(value);
  if (!parsed.success) return { success: false, error: parsed.error };
  if (key !== undefined) {
    // Oldest first out: a Map iterates in insertion order.
    if (parsedOptions.size >= PARSED_OPTIONS_MAX) parsedOptions.delete(parsedOptions.keys().next().value!);
    parsedOptions.set(key, Object.freeze(parsed.data));
  }
  return { success: true, data: parsed.data };
}

/**
 * What a run needs that is not in the store — its options parsed, its model, tools and gate — built
 * before anything of the run is written; a part that fails marks the run failed (failUnbuildable).
 */
export async function rebuild(state: RunnerState, record: RunRecord): Promise<{ options: StoredRunOptions; model: RunOptions['model']; tools: RunOptions['tools']; gate: RunOptions['gate']; extras: LoopExtras }> {
  const runtime = state.options.runtime;
  const parsed = parseOptionsCached(record.options);
  if (!parsed.success) throw await failUnbuildable(state, record, new RunRebuildError(record.id, 'options', formatZodError(parsed.error)));
  const options = parsed.data;
  const parts = await Promise.allSettled([
    (async () => runtime.createModel(options.model, record))(),
    (async () => (typeof runtime.tools === 'function' ? runtime.tools(record, state.runner) : runtime.tools))(),
    (async () => runtime.createGate?.(record))(),
  ]);
  const names = ['model', 'tools', 'gate'] as const;
  // Broken settings files: failing the run would decide for the person; it waits, unclaimed, for
  // the fix — whatever else fails too.
  const unsettled = parts.find((p): p is PromiseRejectedResult => p.status === 'rejected' && SageError.isInstance(p.reason) && p.reason.code === 'settings_invalid');
  if (unsettled) throw await leave(state, record, new RunLeftError(record.id, (unsettled.reason as Error).message, { cause: unsettled.reason }));
  const failed = parts.findIndex((p) => p.status === 'rejected');
  if (failed >= 0) {
    const cause = (parts[failed] as PromiseRejectedResult).reason as unknown;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw await failUnbuildable(state, record, new RunRebuildError(record.id, names[failed]!, reason, { cause }));
  }
  const [model, tools, gate] = parts.map((p) => (p as PromiseFulfilledResult<unknown>).value);
  let extras: LoopExtras;
  try {
    extras = (await runtime.loopExtras?.(record, model as RunOptions['model'])) ?? {};
  } catch (cause) {
    throw await failUnbuildable(state, record, new RunRebuildError(record.id, 'model', cause instanceof Error ? cause.message : String(cause), { cause }));
  }
  return { options, model: model as RunOptions['model'], tools: tools as RunOptions['tools'], gate: gate as RunOptions['gate'], extras };
}

/**
 * Builds the loop for a run this process has just claimed, and follows it into the store. With
 * `answer`, the run is released and not claimed yet: the answer to its pending request resumes it,
 * and its first write claims it and records the answer (see RecorderOptions.claim).
 */
export async function driveRun(
  state: RunnerState,
  record: RunRecord,
  answer?: { request: InteractionRequest; response: InteractionResponse },
  /** The run's checkpoint, last seq and unfinished calls, read with `record` (loadRunForResume). */
  read?: Omit<RunResumeState, 'run'>,
): Promise<DurableRunHandle> {
  try {
    return await buildAndDrive(state, record, answer, read);
  } catch (error) {
    // Claimed here and stopped by the store before its loop existed (its checkpoint unread, say):
    // nothing else would drive it while the claim holds, so it resumes once the store is back. A
    // run resumed with an answer is not claimed yet: its answer is stored the usual way instead.
    if (!answer && isStoreFault(error)) resumeWhenStoreBack(state, record.id);
    throw error;
  }
}

async function buildAndDrive(
  state: RunnerState,
  record: RunRecord,
  answer: { request: InteractionRequest; response: InteractionResponse } | undefined,
  read: Omit<RunResumeState, 'run'> | undefined,
): Promise<DurableRunHandle> {
  const runtime = state.options.runtime;
  const { options, model, tools, gate, extras } = await rebuild(state, record);
  const loaded = read ? read.checkpoint : await state.store.loadCheckpoint(record.id);
  const lastSeq = read ? read.lastSeq : loaded ? loaded.lastSeq : await state.store.lastEventSeq(record.id);
  const history = (options.history ?? []) as Message[];
  const fresh = !loaded && lastSeq === 0;
  // Decoded from the store's rows for this incarnation alone: the loop takes it without a copy
  // (handedOver). Built from the stored history instead, it shares that history's messages.
  const loopState = loaded ? joinLoopState(record.id, loaded) : initialLoopState(record, history, lastSeq);

  let interrupted: string[] = [];
  let startedCalls: string[] = [];
  if (!fresh) {
    // A call that started and has no result was running when its process stopped. It is reported,
    // never re-run — unless it was blocked on its first ask, which re-running only asks again.
    // Only those without a result: a long run's completed calls are never read back on a resume.
    const calls = read ? read.unfinishedCalls : await state.store.listToolCalls(record.id, { unfinished: true });
    // A call an earlier incarnation already marked interrupted is reported again when no checkpoint
    // holds that report (the incarnation was suspended before its turn's next checkpoint): its
    // status is no longer `started`, and it must not look like a call that never ran.
    const reported = (c: (typeof calls)[number]) => c.status === 'interrupted' || (c.status === 'started' && !(c.waiting && !c.passedAsk));
    interrupted = calls.filter((c) => reported(c) && !loopState.turnResults[c.toolCallId]).map((c) => c.toolCallId);
    startedCalls = calls.filter((c) => c.status === 'started').map((c) => c.toolCallId);
  }

  const live = {} as LiveRun;
  const responder =
    options.mode === 'batch' ? batchResponder : options.mode === 'non-interactive' ? createAutoResponder(options.autoResponse ?? 'allow') : runtime.createResponder?.(record);
  const recorder = new RunRecorder({
    store: watchRelease(state.store, live),
    runId: record.id,
    owner: state.instanceId,
    epoch: answer ? record.epoch + 1 : record.epoch,
    ...(answer ? { claim: { epoch: record.epoch, leaseMs: state.leaseMs, ...answer } } : {}),
    position: positionOf(loaded),
    flushDelayMs: state.options.flushDelayMs,
    ...(fresh ? {} : { resumed: { startedCalls } }),
    onWaiting: (request) => armIdle(state, live, request),
    onLeaseLost: () => live.handle?.run.suspend('another instance took the run over'),
    // Stopped here as at a crash: nothing more is written, and the run resumes from its last commit
    // when the store is back (settle schedules it).
    onStoreFault: (error) => live.handle?.run.suspend(`the store failed (${error.code}); the run resumes from its last commit when it is back`),
    // Nobody answers here and nothing waits in memory: the ask and the release are one commit (for
    // every ask, or only for the next-message ask of an idle run).
    releaseAtAsk: !responder && !extras.holdWhileWaiting && (state.options.idleSuspendMs === 0 ? true : state.options.idleRunSuspendMs === 0 ? 'next-message' : false),
  });
  await recorder.markInterrupted(interrupted);

  const broker = new InteractionBroker({ persistence: extras.holdWhileWaiting ? committedFirst(recorder) : recorder });
  broker.responder = responder;
  // A local, then stored: a function literal assigned straight to a property is allocated in V8's
  // old generation, and would keep this incarnation (broker, recorder, loop) through every scavenge
  // after its release until the next full GC (see InteractionBroker.open).
  const onBrokerEvent = (event: BrokerEvent) => {
    // Idle counts while any request waits: one ending (answered, say) leaves the others waiting.
    if (event.type !== 'interaction.requested' && broker.pending(record.id).length === 0) disarmIdle(state, live);
  };
  broker.onEvent = onBrokerEvent;

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
    // Its events are all in the store; memory keeps only the newest for an iterator not there yet.
    unreadEventLimit: state.options.unreadEventLimit ?? 256,
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
    ...(fresh ? (history.length ? { history } : {}) : { resumeFrom: { state: loopState, interruptedCallIds: interrupted, handedOver: loaded !== undefined } }),
  };
  const loop = startLoop(record.task, loopOptions);
  live.broker = broker;
  live.recorder = recorder;
  if (extras.holdWhileWaiting) live.hold = true;
  live.handle = { runId: record.id, run: loop, outcome: settle(state, record.id, live, loop) };
  state.live.set(record.id, live);
  return live.handle;
}

export async function settle(state: RunnerState, runId: string, live: LiveRun, loop: Run): Promise<DurableOutcome> {
  const done = (async (): Promise<DurableOutcome> => {
    const outcome = await loop.outcome;
    disarmIdle(state, live);
    try {
      if (!live.recorder.leaseLost && !live.recorder.storeFault) await live.recorder.finish(outcome);
    } catch {
      // Lease lost while finishing: the new owner has the run; this process wrote nothing more.
      // Or the store failed: the run resumes from its last commit when it is back (below).
    }
    if (state.live.get(runId) === live) state.live.delete(runId);
    if (live.recorder.storeFault) {
      resumeWhenStoreBack(state, runId);
      return { ...outcome, storeFault: live.recorder.storeFault.code };
    }
    // An answer this loop took was refused at its commit (answered elsewhere first): the run is
    // still claimed here; driven again, it reads the answer that won.
    if (live.recorder.refused && !state.closed) void resumeRun(state, runId).catch((error: unknown) => isStoreFault(error) && resumeWhenStoreBack(state, runId));
    if (live.recorder.leaseLost) return { ...outcome, leaseLost: true };
    if (state.closed) return outcome;
    if (outcome.status === 'suspended' && !state.closed) {
      const pending = outcome.pendingInteractionId;
      // Committed with the release itself: nobody could answer it before the run was released, and
      // whoever answers it after resumes the run (an answerer here sees it live, or released): not read.
      const committedWithRelease = pending !== undefined && live.releasedWith?.has(pending) === true;
      await resumeIfAnswered(state, runId, committedWithRelease ? undefined : pending, live.wake);
    }
    return outcome;
  })();
  state.settling.add(done);
  void done.finally(() => state.settling.delete(done)).catch(() => {});
  return done;
}

/**
 * The store as one incarnation's recorder writes to it: the write that releases the run notes the
 * requests it committed (live.releasedWith). Such a request did not exist before that commit, so
 * no answer to it can predate the release: settle skips the read that looks for one (one store
 * read per approval cycle fewer). A request committed earlier (by saveInteraction, or by a flush
 * that carried the ask before the suspension's write) is still looked up.
 */
function watchRelease(store: Store, live: LiveRun): Store {
  const write = async (runWrite: RunWrite): Promise<void> => {
    await store.write(runWrite);
    if (runWrite.run?.release && runWrite.asks?.length) live.releasedWith = new Set(runWrite.asks.map((request) => request.id));
  };
  // Every other method is the store's own, looked up on it when called (`this` reaches its state).
  return Object.create(store, { write: { value: write } }) as Store;
}

/**
 * The recorder without deferred answers, for a run held while it waits: its agent acts on an answer
 * the moment it gets it, so the answer is committed first (a compare-and-set of its own) and one
 * given elsewhere meanwhile is refused — never an answer the agent acted on overruled at the next write.
 */
function committedFirst(recorder: RunRecorder): InteractionPersistence {
  return {
    save: (request) => recorder.save(request),
    claimAnswer: (request, response) => recorder.claimAnswer(request, response),
    close: (requestId, status, reason) => recorder.close(requestId, status, reason),
  };
}

/**
 * An answer may land while the run is being suspended; whoever sees it last resumes the run
 * (the responder, if the run was already suspended; this process otherwise).
 */
export async function resumeIfAnswered(state: RunnerState, runId: string, interactionId: string | undefined, wake: LiveRun['wake']): Promise<void> {
  try {
    let answered = wake === 'answered';
    if (!answered && interactionId) {
      const interaction = await state.store.getInteraction(interactionId);
      answered = interaction !== undefined && interaction.status !== 'pending';
    }
    if (!answered) return;
    await resumeRun(state, runId);
  } catch (error) {
    // The store failed on the way: the run (released, or claimed here with its checkpoint unread)
    // is looked at again once it is back, instead of waiting for an answer that already came.
    if (isStoreFault(error)) return resumeWhenStoreBack(state, runId);
    if (!(error instanceof RunBusyError || error instanceof RunFinishedError || error instanceof RunRebuildError || error instanceof RunLeftError)) throw error;
  }
}

export function armIdle(state: RunnerState, live: LiveRun, request?: InteractionRequest): void {
  const idleRun = request !== undefined && state.options.idleRunSuspendMs !== undefined && isNextMessageRequest(request);
  const ms = idleRun ? state.options.idleRunSuspendMs! : (state.options.idleSuspendMs ?? 300_000);
  disarmIdle(state, live);
  if (live.hold) return;
  // Never synchronously, and not in a microtask: we are inside the recorder's save, and the broker
  // settles the request (its abort listener among it) some promise hops after that returns. A
  // release in a microtask (b3fa4d7) lost a subagent run's results: the parent with MCP tools in
  // src/subagents/subagents.test.ts ended with none of its children's answers; with setImmediate it
  // passes. The cost: when a flush timer already due runs first, the request commits on its own
  // (≈ 2.5 commits per approval cycle instead of 2 in bench/durable.ts, H1's count).
  const release = (reason = ms === 0 ? (idleRun ? 'its task is done: it waits for its next message in the store' : 'nobody is there to answer') : `no answer within ${Math.round(ms / 1000)} s`) => {
    disarmIdle(state, live);
    // Answered meanwhile (an answer given live can land between the request's commit and the arming):
    // a run that waits for nothing is never released for idleness.
    if (live.handle && live.broker.pending(live.handle.runId).length === 0) return;
    live.handle?.run.suspend(reason);
  };
  live.release = release;
  state.waiting.add(live);
  const cap = state.options.maxWaitingInMemory;
  if (cap !== undefined && state.waiting.size > cap) queueTrim(state, cap);
  if (ms > 0) {
    live.idleTimer = setTimeout(() => release(), ms);
    return;
  }
  // Disarming marks the token (one kind of handle for both cases).
  const token = { cancelled: false };
  live.idleTimer = token;
  setImmediate(() => {
    if (!token.cancelled && live.idleTimer === token) release();
  });
}

/**
 * Releases the runs that have waited longest until at most `cap` wait in memory: after the current
 * saves (setImmediate, as armIdle's own release), once for every run that started waiting meanwhile.
 */
function queueTrim(state: RunnerState, cap: number): void {
  if (state.trimQueued) return;
  state.trimQueued = true;
  setImmediate(() => {
    state.trimQueued = false;
    for (const live of state.waiting) {
      if (state.waiting.size <= cap || state.closed) break;
      if (live.release) live.release(`more than ${cap} runs waited in this process's memory (maxWaitingInMemory); the longest-waiting went to the store`);
      else state.waiting.delete(live);
    }
  });
}

export function disarmIdle(state: RunnerState, live: LiveRun): void {
  const timer = live.idleTimer;
  if (timer && 'cancelled' in timer) timer.cancelled = true;
  else if (timer) clearTimeout(timer);
  live.idleTimer = undefined;
  live.release = undefined;
  state.waiting.delete(live);
}

/**
 * Resumes a run here from its last checkpoint: a suspended one, or a running one whose owner's
 * lease expired. Throws RunBusyError while a live instance drives it, RunFinishedError once done.
 */
export function resumeRun(state: RunnerState, runId: string): Promise<DurableRunHandle> {
  return state.once(runId, async () => {
    const record = await state.store.getRun(runId);
    if (!record) throw new RunNotFoundError(runId);
    if (FINISHED_STATUSES.includes(record.status)) throw new RunFinishedError(runId, record.status);
    const claimed = await state.store.claimRun(runId, state.instanceId, state.leaseMs, ['suspended', 'idle', 'running']);
    if (!claimed) {
      const now = await state.store.getRun(runId);
      if (now && FINISHED_STATUSES.includes(now.status)) throw new RunFinishedError(runId, now.status);
      throw new RunBusyError(runId, now?.owner ?? 'another instance', now?.leaseExpiresAt ?? null);
    }
    return driveRun(state, claimed);
  });
}

function loopMode(options: StoredRunOptions): RunOptions['mode'] {
  if (options.mode === 'batch') return { type: 'batch' };
  if (options.mode === 'non-interactive') return { type: 'non-interactive', autoResponse: options.autoResponse ?? 'allow' };
  return { type: 'interactive' };
}
