import { LeaseLostError, RunBusyError, type RunRecord } from '../store/index.js';
import { driveRun, resumeRun } from './drive-run.js';
import { RunFinishedError, RunLeftError, RunRebuildError } from './errors.js';
import type { RecoverResult, RunnerState } from './runner-state.js';

// Maintenance: leases renewed, overdue requests expired, orphaned and answered runs taken over.

/**
 * Crash recovery and takeover: expires overdue requests, then resumes here every run that
 * needs a driver — running runs whose owner's lease expired (their in-flight tool calls get an
 * "interrupted by restart" result), queued runs, and suspended runs whose request was answered,
 * expired or cancelled while nobody drove them.
 */
export async function recover(state: RunnerState, options: { limit?: number } = {}): Promise<RecoverResult> {
  const limit = options.limit ?? 100;
  const expired = await expireDue(state);
  const resumed: string[] = [];
  const left: RunLeftError[] = [];
  // Never re-claim what this process drives or is rebuilding (its lease may have run out under
  // load): a new claim would fence its live loop out.
  const orphans = await state.store.claimOrphans(state.instanceId, state.leaseMs, limit, { exclude: [...state.live.keys(), ...state.starting.keys()] });
  // Every claimed run is registered as being rebuilt before anything else can run: a resume of one
  // of them meanwhile (an answer, a wake) joins this claim instead of claiming it again.
  const claimed = orphans.filter((record) => !state.live.has(record.id) && !state.starting.has(record.id));
  const started = await Promise.allSettled(claimed.map((record) => state.once(record.id, () => driveRun(state, record))));
  started.forEach((result, i) => {
    if (result.status === 'fulfilled') resumed.push(claimed[i]!.id);
    else if (result.reason instanceof RunLeftError) left.push(result.reason);
    // Claimed again since (by another instance): the claim's writes were refused; it drives the run.
    // Cannot be rebuilt here: it was marked failed (and reported); the others go on.
    else if (!(result.reason instanceof LeaseLostError || result.reason instanceof RunRebuildError || result.reason instanceof RunLeftError)) throw result.reason;
  });
  for (const record of await wakeableRuns(state, limit)) {
    try {
      await resumeRun(state, record.id);
      resumed.push(record.id);
    } catch (error) {
      if (error instanceof RunLeftError) left.push(error);
      else if (!(error instanceof RunBusyError || error instanceof RunFinishedError || error instanceof RunRebuildError)) throw error;
    }
  }
  return { resumed, expired, left };
}

/** Released runs (suspended, or idle with no owner) whose awaited request is no longer pending. */
export async function wakeableRuns(state: RunnerState, limit: number): Promise<RunRecord[]> {
  const suspended = await state.store.listRuns({ status: ['suspended', 'idle'], limit: limit * 10 });
  const out: RunRecord[] = [];
  for (const run of suspended) {
    if (out.length >= limit) break;
    // An idle run with an owner waits in that owner's memory (or is an orphan: claimOrphans's).
    if (run.owner !== null || state.live.has(run.id) || state.starting.has(run.id)) continue;
    if (!run.pendingInteractionId) {
      out.push(run);
      continue;
    }
    const interaction = await state.store.getInteraction(run.pendingInteractionId);
    if (!interaction || interaction.status !== 'pending') out.push(run);
  }
  return out;
}

/** Applies timeout behaviour to overdue requests: a live run gets it now, a suspended one on resume. */
export async function expireDue(state: RunnerState): Promise<string[]> {
  const expired = await state.store.expireDue();
  for (const record of expired) {
    const live = state.live.get(record.runId);
    // The store already says expired; the broker tells the waiting code (deny a permission, cancel a question).
    if (live) await live.broker.close(record.id, 'expired', record.reason ?? 'expired');
  }
  return expired.map((r) => r.id);
}

export async function maintain(state: RunnerState): Promise<void> {
  if (state.closed) return;
  const lives = [...state.live.entries()];
  const ids = [...lives.map(([id]) => id), ...[...state.starting.keys()].filter((id) => !state.live.has(id))];
  if (ids.length) {
    const kept = new Set(await state.store.renewLeases(state.instanceId, ids, state.leaseMs));
    for (const [id, live] of lives) {
      // Lost: another instance took the run over. Stop here without writing (writes are fenced anyway).
      // Only the incarnation the renewal was asked for: a newer one here has its own claim. One whose
      // claim rides with its first write holds no lease yet.
      if (!kept.has(id) && state.live.get(id) === live && !live.recorder.stopped && !live.recorder.claiming) live.handle.run.suspend('another instance took the run over');
    }
  }
  if (state.options.autoRecover) await recover(state);
  else await expireDue(state);
}
