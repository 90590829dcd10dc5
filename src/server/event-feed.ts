import type { RunEvent } from '../events/index.js';
import { FINISHED_STATUSES, type Store } from '../store/index.js';

const PAGE = 500;

/**
 * A run's events after `afterSeq`: first what the log holds, then each new commit as the store
 * announces it, ending once the run's record says it finished and its log holds nothing more (the
 * runner writes the final status after the last event, so nothing is cut off).
 * It subscribes before the first read, so an event committed between the replay and the live part
 * is neither missed nor sent twice: everything is read by seq from the log, never from the push.
 */
export async function* followRunEvents(store: Store, runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<RunEvent> {
  let last = afterSeq;
  let dirty = true;
  // Whether the run's status may have changed: read the record only then, not after every event.
  let statusChanged = true;
  let wake: (() => void) | undefined;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const unsubscribe = await store.subscribe(runId, (n) => {
    if (n.type === 'run') statusChanged = true;
    if ((n.type === 'events' && n.seq > last) || n.type === 'run') poke();
  });
  signal.addEventListener('abort', poke);
  try {
    while (!signal.aborted) {
      if (!dirty) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (dirty || signal.aborted) resolve();
        });
        wake = undefined;
        continue;
      }
      dirty = false;
      let batch: RunEvent[];
      do {
        batch = await store.readEvents(runId, { afterSeq: last, limit: PAGE });
        for (const event of batch) {
          if (event.seq <= last) continue;
          last = event.seq;
          yield event;
        }
      } while (batch.length === PAGE && !signal.aborted);
      // Nothing more will come for a finished run whose terminal event the client already has.
      if (!statusChanged) continue;
      statusChanged = false;
      const run = await store.getRun(runId);
      if (!run || FINISHED_STATUSES.includes(run.status)) {
        const tail = await store.readEvents(runId, { afterSeq: last, limit: PAGE });
        if (tail.length === 0) return;
        dirty = true;
      }
    }
  } finally {
    signal.removeEventListener('abort', poke);
    await unsubscribe();
  }
}
