import { FINISHED_STATUSES, type RunRecord, type Store } from '../store/index.js';

/**
 * Waits until a run is finished, at most `ms`, and returns its record then (or the last one read).
 * A store notification ends the wait at once; a short poll covers runs driven by another process on
 * SQLite, whose notifications do not cross processes.
 */
export async function waitUntilFinished(store: Store, runId: string, ms: number, pollMs = 100): Promise<RunRecord | undefined> {
  let wake: () => void = () => {};
  const unsubscribe = await store.subscribe(runId, (n) => {
    if (n.type === 'run' && FINISHED_STATUSES.includes(n.status)) wake();
  });
  const deadline = Date.now() + ms;
  try {
    for (;;) {
      const run = await store.getRun(runId);
      if (!run || FINISHED_STATUSES.includes(run.status) || Date.now() >= deadline) return run;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(pollMs, Math.max(0, deadline - Date.now())));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    await unsubscribe();
  }
}
