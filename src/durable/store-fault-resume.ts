import { FINISHED_STATUSES, isStoreFault, RunBusyError } from '../store/index.js';
import { RunFinishedError, RunLeftError, RunRebuildError } from './errors.js';
import type { RunnerState } from './runner-state.js';

/** How a run is resumed here: drive-run's `resumeRun`, given by the caller so the two files do not import each other. */
export type ResumeRun = (state: RunnerState, runId: string) => Promise<unknown>;

// Runs whose incarnation here ended on a store fault (down or full), resumed once it is back.

/** First wait before looking again, and the longest: the store back is noticed within a second. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 1_000;

/**
 * Notes a run whose write failed on the store: it stopped here as at a crash, and is resumed from
 * its last commit as soon as the store answers again — no restart, no resend of work that was
 * accepted. Its lease is not renewed meanwhile, so if this process dies first, another instance
 * takes it over when the lease runs out.
 */
export function resumeWhenStoreBack(state: RunnerState, runId: string, resume: ResumeRun): void {
  if (state.closed) return;
  state.faulted.add(runId);
  if (!state.faultTimer) schedule(state, FIRST_RETRY_MS, resume);
}

function schedule(state: RunnerState, ms: number, resume: ResumeRun): void {
  const timer = setTimeout(() => {
    const pass = retry(state, resume);
    state.faultRetry = pass;
    void pass.then((again) => {
      state.faultTimer = undefined;
      state.faultRetry = undefined;
      if (again && !state.closed && state.faulted.size) schedule(state, Math.min(ms * 2, MAX_RETRY_MS), resume);
    });
  }, ms);
  timer.unref();
  state.faultTimer = timer;
}

/** One pass over the faulted runs; true when some must be tried again (the store is still away). */
async function retry(state: RunnerState, resume: ResumeRun): Promise<boolean> {
  if (state.closed) return false;
  for (const runId of [...state.faulted]) {
    if (state.closed) return false;
    try {
      await resumeIfOurs(state, runId, resume);
      state.faulted.delete(runId);
    } catch (error) {
      // Still away: the others would fail the same way; look again later.
      if (isStoreFault(error)) return true;
      state.faulted.delete(runId);
    }
  }
  return state.faulted.size > 0;
}

/**
 * Resumes the run if nobody else drives it: still claimed by this process (its incarnation stopped
 * mid-way), or released with its request settled (an answer that landed although its commit's
 * acknowledgement was lost). A run released and still waiting stays in the store: its answer
 * resumes it, as any other.
 */
async function resumeIfOurs(state: RunnerState, runId: string, resume: ResumeRun): Promise<void> {
  if (state.live.has(runId) || state.starting.has(runId)) return;
  const run = await state.store.getRun(runId);
  if (!run || FINISHED_STATUSES.includes(run.status)) return;
  const ours = run.owner === state.instanceId;
  if (!ours) {
    if (run.owner !== null || !run.pendingInteractionId) return;
    const pending = await state.store.getInteraction(run.pendingInteractionId);
    if (!pending || pending.status === 'pending') return;
  }
  try {
    await resume(state, runId);
  } catch (error) {
    if (error instanceof RunBusyError || error instanceof RunFinishedError || error instanceof RunRebuildError || error instanceof RunLeftError) return;
    throw error;
  }
}
