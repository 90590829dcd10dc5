import {
  validateResponse,
  InteractionCancelledError,
  InteractionNotFoundError,
  type InteractionResponse,
} from '../interaction/index.js';
import { FINISHED_STATUSES, LeaseLostError, RunBusyError, type InteractionRecord, type RunRecord, type StoreNotification } from '../store/index.js';
import { endLeaseIfDead } from './dead-owners.js';
import { driveRun, resumeRun } from './drive-run.js';
import { RunFinishedError, RunLeftError, RunRebuildError } from './errors.js';
import { RecorderClosedError } from './run-recorder.js';
import type { Delivery, DurableRunHandle, LiveRun, RespondResult, RunnerState } from './runner-state.js';

// Answers and wakes: an answer given here or in another process reaches the run wherever it is
// driven (or resumes it), and what the store says changed reaches the loops waiting here.

/**
 * Answers a stored request. The response is validated against the request, the first valid
 * answer wins atomically (a later one gets InteractionAlreadyAnsweredError saying who and
 * when), and the run resumes: here when this process drives it or nobody does, through a
 * notification when another live instance does.
 */
export async function respond(state: RunnerState, interactionId: string, raw: unknown, known?: InteractionRecord): Promise<RespondResult> {
  const stored = known?.id === interactionId ? known : await state.store.getInteraction(interactionId);
  if (!stored) throw new InteractionNotFoundError(interactionId);
  const body = typeof raw === 'object' && raw !== null ? { ...raw, requestId: interactionId } : raw;
  const response = validateResponse(stored.request, body);
  const live = state.live.get(stored.runId);
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
  // Nobody drives the run here: claim it with the answer, in one commit, when it is released —
  // the commit that also records what the resumed loop does first (its call's intent).
  const claimable = () => !state.closed && !state.live.has(stored.runId) && !state.starting.has(stored.runId);
  if (claimable() && stored.status === 'pending') {
    const resumed = await resumeWithAnswer(state, stored, response);
    if (resumed) return { response, ...resumed };
  }
  const claimHere = claimable();
  const answered = await state.store.claimAnswer(interactionId, response, claimHere ? { claimRun: { owner: state.instanceId, leaseMs: state.leaseMs } } : {});
  if (answered.claimedRun) return { response, ...(await driveClaimed(state, answered.claimedRun)) };
  return { response, ...(await wakeAfterAnswer(state, stored)) };
}

/**
 * Resumes a released run with an answer to its pending request, without a commit of its own: the
 * loop is rebuilt here, takes the answer, and its first write (the call's intent, typically) claims
 * the run and records the answer. Undefined when that did not happen — the run is not released,
 * could not be rebuilt, or was claimed or answered elsewhere first — and the caller stores the
 * answer the usual way (which also tells a second answerer who was first).
 */
async function resumeWithAnswer(state: RunnerState, stored: InteractionRecord, response: InteractionResponse): Promise<Delivery | undefined> {
  // The run with what its rebuild reads (checkpoint, logs, unfinished calls), in one read: one
  // snapshot, at the claim (epoch) the resumed write claims from — any write since is refused.
  const resume = await state.store.loadRunForResume(stored.runId);
  const run = resume?.run;
  if (!resume || !run || run.owner !== null || (run.status !== 'suspended' && run.status !== 'idle') || run.pendingInteractionId !== stored.id) return undefined;
  let handle: DurableRunHandle;
  try {
    handle = await state.once(run.id, () => driveRun(state, run, { request: stored.request, response }, resume));
  } catch {
    return undefined;
  }
  const live = state.live.get(run.id);
  // Joined a resume already under way (not this answer's): the answer is stored the usual way.
  if (!live || live.handle !== handle || !live.recorder.claimsWith(stored.id)) return undefined;
  try {
    await live.recorder.claimed;
  } catch {
    await handle.outcome.catch(() => {});
    return undefined;
  }
  return { delivered: 'resumed', handle };
}

/** Drives a run claimed with its answer; one that cannot be rebuilt keeps the answer stored. */
export async function driveClaimed(state: RunnerState, record: RunRecord): Promise<Delivery> {
  try {
    return { delivered: 'resumed', handle: await state.once(record.id, () => driveRun(state, record)) };
  } catch (error) {
    if (error instanceof RunRebuildError || error instanceof RunLeftError || error instanceof LeaseLostError) return { delivered: 'stored' };
    throw error;
  }
}

/** After an answer was stored: resume the run here, or tell its live owner. */
export async function wakeAfterAnswer(state: RunnerState, stored: InteractionRecord): Promise<Delivery> {
  // Driven (or being rebuilt) here: the loop picks the stored answer up, now or when it asks again.
  if (state.live.has(stored.runId) || state.starting.has(stored.runId)) {
    try {
      return { delivered: 'resumed', handle: await wakeHere(state, stored.runId, stored.id) };
    } catch (error) {
      if (error instanceof RunBusyError || error instanceof RunFinishedError || error instanceof RunRebuildError || error instanceof RunLeftError) return { delivered: 'stored' };
      throw error;
    }
  }
  const run = await state.store.getRun(stored.runId);
  if (!run || FINISHED_STATUSES.includes(run.status)) return { delivered: 'stored' };
  const leased = (run.status === 'running' || run.status === 'idle') && run.owner !== null && run.leaseExpiresAt !== null && Date.parse(run.leaseExpiresAt) >= Date.now();
  // An owner of this host that died is not waited for: its lease ends now and the run resumes here.
  const ownerAlive = leased && run.owner !== state.instanceId && !(await endLeaseIfDead(state, run.owner!));
  if (ownerAlive) {
    await state.store.publish({ type: 'wake', runId: run.id, interactionId: stored.id, reason: 'answered' });
    return { delivered: 'notified' };
  }
  try {
    return { delivered: 'resumed', handle: await wakeHere(state, run.id, stored.id) };
  } catch (error) {
    // Cannot be rebuilt: it is failed now, with the reason; the answer stays stored.
    if (error instanceof RunFinishedError || error instanceof RunRebuildError || error instanceof RunLeftError) return { delivered: 'stored' };
    if (error instanceof RunBusyError) {
      // Someone else claimed it meanwhile (or its owner renewed a lease that looked expired here):
      // tell the owner, which may already be waiting on this request in memory.
      await state.store.publish({ type: 'wake', runId: run.id, interactionId: stored.id, reason: 'answered' });
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
export function wakeHere(state: RunnerState, runId: string, interactionId: string | undefined): Promise<DurableRunHandle> {
  const live = state.live.get(runId);
  if (live?.hold) {
    void answerHeld(state, live, interactionId).catch(() => {});
    return Promise.resolve(live.handle);
  }
  if (live) {
    live.wake = 'answered';
    if (!interactionId || live.broker.isPending(interactionId)) live.handle.run.suspend('answered from another process');
    return Promise.resolve(live.handle);
  }
  return resumeRun(state, runId);
}

/**
 * A run held here while it waits (an external agent's process lives in this process) is never
 * released for an answer stored elsewhere: a rebuild could not get the agent back. The stored
 * outcome goes to the ask waiting here instead — an answer to the agent, a cancel to the run.
 */
async function answerHeld(state: RunnerState, live: LiveRun, interactionId: string | undefined): Promise<void> {
  const asked = interactionId ? [interactionId] : live.broker.pending(live.handle.runId).map((r) => r.id);
  const ids = asked.filter((id) => live.broker.isPending(id));
  if (ids.length === 0) return;
  const settled = await state.store.listInteractions({ ids, status: ['answered', 'expired', 'cancelled'] });
  for (const record of settled) handOverHeld(state, live, record);
}

function handOverHeld(state: RunnerState, live: LiveRun, record: InteractionRecord): void {
  if (state.closed || state.live.get(record.runId) !== live || !live.broker.isPending(record.id)) return;
  if (record.status === 'answered') {
    const response = record.response!;
    void live.broker
      .answeredElsewhere(record.id, response)
      .then((taken) => taken && live.recorder.consumeStored(record.id))
      .catch(() => {});
  } else if (record.status === 'expired') {
    void live.broker.close(record.id, 'expired', record.reason ?? 'expired').catch(() => {});
  } else live.handle.run.cancel(record.reason ?? 'the run was cancelled');
}

export function onNotification(state: RunnerState, n: StoreNotification): void {
  // The channel was down a while: a wake sent meanwhile is lost; look in the store now.
  if (n.type === 'resync' && !state.closed) pollWaiting(state, true);
  if (n.type !== 'wake' || state.closed) return;
  if (n.reason === 'cancel') {
    state.live.get(n.runId)?.handle.run.cancel('the run was cancelled');
    return;
  }
  // The answer was stored by another process: hand it to the run driven (or being rebuilt) here.
  if (state.live.has(n.runId) || state.starting.has(n.runId) || n.reason === 'answered') void wakeHere(state, n.runId, n.interactionId).catch(() => {});
}

/** One look at a time; `force` looks even when the data version says nothing changed. */
export function pollWaiting(state: RunnerState, force: boolean): void {
  if (state.closed) return;
  if (state.polling) {
    // A forced look (resync) must not be swallowed by a routine one already in flight.
    if (force) void state.polling.then(() => pollWaiting(state, true));
    return;
  }
  state.polling = checkWaiting(state, force)
    // The database unreachable a moment: the next tick looks again.
    .catch(() => {})
    .finally(() => {
      state.polling = undefined;
    });
}

/**
 * Finds the requests runs here wait for in memory that the store says are settled — answered,
 * expired or cancelled by another process whose push never arrived — and acts as the push would
 * have: an answer wakes the run (it rebuilds and reads it), an expiry closes the request, a
 * cancel (only a run cancel closes another driver's request) cancels the run. One primary-key
 * query; on SQLite only when another connection committed since the last look.
 */
function anyWaiting(state: RunnerState): boolean {
  for (const [runId, live] of state.live) if (live.broker.pending(runId).length > 0) return true;
  return false;
}

export async function checkWaiting(state: RunnerState, force: boolean): Promise<void> {
  // Cheap checks first: this runs every tick with every live run; the map of all waiting requests
  // is built only when another connection committed something (or when forced).
  if (!anyWaiting(state)) return;
  const version = await state.store.dataVersion?.();
  if (!force && version !== undefined && version === state.seenVersion) return;
  const waiting = new Map<string, string>();
  for (const [runId, live] of state.live) for (const request of live.broker.pending(runId)) waiting.set(request.id, runId);
  if (waiting.size === 0) return;
  const settled = await state.store.listInteractions({ ids: [...waiting.keys()], status: ['answered', 'expired', 'cancelled'] });
  state.seenVersion = version;
  for (const record of settled) {
    const live = state.live.get(record.runId);
    // Settled here meanwhile (answered through this process, expired by its own timer): nothing to do.
    if (state.closed || !live?.broker.isPending(record.id)) continue;
    // Being saved (a resumed run asking again): the save reads the store and returns what is settled
    // there; waking the run would release it at an answer it is taking. Its read may have come just
    // before the commit seen here, so the next poll looks again whatever the data version says.
    if (live.broker.isSaving(record.id)) {
      state.seenVersion = undefined;
      continue;
    }
    // Consumed: a loop already took it — this one, whose save is returning it right now (waking it
    // would only rebuild it for nothing), or a newer incarnation elsewhere (this one is stale).
    if (record.status === 'answered' && record.consumed) continue;
    if (live.hold) handOverHeld(state, live, record);
    else if (record.status === 'answered') void wakeHere(state, record.runId, record.id).catch(() => {});
    else if (record.status === 'expired') void live.broker.close(record.id, 'expired', record.reason ?? 'expired').catch(() => {});
    else live.handle.run.cancel(record.reason ?? 'the run was cancelled');
  }
}
