import { LeaseLostError, RunBusyError, type RunRecord } from '../store/index.js';
import { driveRun, resumeRun } from './drive-run.js';
import { RunFinishedError, RunLeftError, RunRebuildError } from './errors.js';
import { reapDeadOwners } from './dead-owners.js';
import type { RecoverResult, RunnerState } from './runner-state.js';

// Maintenance: leases renewed, overdue requests expired, orphaned and answered runs taken over.

/**
 * Crash recovery and takeover: expires overdue requests, then resumes here every run that
 * needs a driver — running runs whose owner's lease expired or whose owner, a process of this
 * host, died (their in-flight tool calls get an
 * "interrupted by restart" result), queued runs, and suspended runs whose request was answered,
 * expired or cancelled while nobody drove them.
 */
export async function recover(state: RunnerState, options: { limit?: number } = {}): Promise<RecoverResult> {
  const limit = options.limit ?? 100;
  const expired = await expireDue(state);
  // A dead owner on this host is known now: its leases end here rather than when they run out.
  await reapDeadOwners(state);
  const resumed: string[] = [];
  const left: RunLeftError[] = [];
  // Never re-claim what this process drives or is rebuilding (its lease may have run out under
  // load): a new claim would fence its live loop out.
  const orphans = await claimOrphans(state, limit);
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

/**
 * Claims runs whose owner's lease ran out, skipping what this process drives or is rebuilding.
 * Looks first (a read, nearly always empty): the claim itself is a write transaction carrying every
 * live run's id as an exclusion list, which a server holding 1,000 waiting runs paid on every tick.
 */
async function claimOrphans(state: RunnerState, limit: number): Promise<RunRecord[]> {
  const mine = (id: string) => state.live.has(id) || state.starting.has(id);
  const candidates = await state.store.listOrphanCandidates(Date.now(), limit + state.live.size + state.starting.size);
  if (!candidates.some((id) => !mine(id))) return [];
  return state.store.claimOrphans(state.instanceId, state.leaseMs, limit, { exclude: [...state.live.keys(), ...state.starting.keys()] });
}

/** Released runs (suspended, or idle with no owner) whose awaited request is no longer pending. */
export async function wakeableRuns(state: RunnerState, limit: number): Promise<RunRecord[]> {
  // The store filters (an index range, nearly always empty); runs this process already holds or is
  // rebuilding are skipped here, so a few more are asked for.
  const candidates = await state.store.listWakeableRuns(limit + state.live.size + state.starting.size);
  return candidates.filter((run) => !state.live.has(run.id) && !state.starting.has(run.id)).slice(0, limit);
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

/** Leases renewed per statement (see maintain). */
const RENEW_CHUNK = 64;

export async function maintain(state: RunnerState): Promise<void> {
  if (state.closed) return;
  const lives = [...state.live.entries()];
  const ids = [...lives.map(([id]) => id), ...[...state.starting.keys()].filter((id) => !state.live.has(id))];
  const asked = new Map(lives);
  // In chunks, each its own statement: on SQLite one UPDATE's cost grows faster than its IN list,
  // so one statement for every live run held the event loop. Between chunks the loop turns
  // (setImmediate: answers, taps and SSE writes waiting on I/O run): awaiting the commits alone ran
  // the chunks back to back, one stall per pass with many runs waiting (figures in bench/README.md).
  for (let start = 0; start < ids.length; start += RENEW_CHUNK) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    if (state.closed) return;
    const chunk = ids.slice(start, start + RENEW_CHUNK);
    const kept = new Set(await state.store.renewLeases(state.instanceId, chunk, state.leaseMs));
    for (const id of chunk) {
      const live = asked.get(id);
      // Lost: another instance took the run over. Stop here without writing (writes are fenced anyway).
      // Only the incarnation the renewal was asked for: a newer one here has its own claim. One whose
      // claim rides with its first write holds no lease yet.
      if (live && !kept.has(id) && state.live.get(id) === live && !live.recorder.stopped && !live.recorder.claiming) live.handle.run.suspend('another instance took the run over');
    }
  }
  if (state.options.autoRecover) await recover(state);
  else await expireDue(state);
}
