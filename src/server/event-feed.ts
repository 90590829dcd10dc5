import type { RunEvent } from '../events/index.js';
import { committedEvents, continuesFrom, FINISHED_STATUSES, type Store, type StoredRunStatus } from '../store/index.js';
import { sharedReadsFor } from './shared-reads.js';

const PAGE = 500;

/**
 * A run's events after `afterSeq`: first what the log holds, then each new commit as the store
 * announces it, ending once the run's record says it finished and its log holds nothing more (the
 * runner writes the final status after the last event, so nothing is cut off).
 * It subscribes before the first read, so an event committed between the replay and the live part
 * is neither missed nor sent twice: everything is read by seq from the log, never from the push.
 * Streams of the same run woken by the same notification share one read (see shared-reads.ts), and
 * so the same event objects, which sse.ts encodes once for all of them.
 */
export async function* followRunEvents(store: Store, runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<RunEvent> {
  let last = afterSeq;
  let dirty = true;
  // Whether the run's status may have changed: read the record only then, not after every event.
  let statusChanged = true;
  // The status the last run notification announced (notifications come in commit order): while it is
  // not a finished one there is nothing to read. Unknown (the first look): read the record.
  let announced: StoredRunStatus | undefined;
  let wake: (() => void) | undefined;
  // The notification that made the next read necessary (none for the first replay): the key under
  // which streams share a read.
  let token: object | undefined;
  // Batches announced since the last look, with their events when this process committed them
  // (committedEvents): sent without a read when they continue the stream. Undefined once one came
  // without its events (another process wrote it, or the channel resynced): the next look reads the log.
  let pushed: (readonly RunEvent[])[] | undefined = [];
  const shared = sharedReadsFor(store);
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const unsubscribe = await store.subscribe(runId, (n) => {
    if (n.type === 'run') {
      statusChanged = true;
      announced = n.status;
    }
    if (n.type === 'events' && n.seq > last) {
      const events = committedEvents(n);
      if (events && pushed) pushed.push(events);
      else pushed = undefined;
    } else if (n.type === 'resync') pushed = undefined;
    if ((n.type === 'events' && n.seq > last) || n.type === 'run') {
      token = n;
      poke();
    }
  });
  const onAbort = () => {
    token = undefined;
    poke();
  };
  signal.addEventListener('abort', onAbort);
  const readAfter = (after: number, by: object | undefined) => shared.run(`events\0${runId}\0${after}`, by, () => store.readEvents(runId, { afterSeq: after, limit: PAGE }));
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
      const by = token;
      token = undefined;
      const fresh = pushed;
      pushed = [];
      if (fresh && fresh.length > 0 && continuesFrom(fresh, last)) {
        // Everything committed since the last look, as committed (the notifications come in commit
        // order, after the commit is durable): no read of the log.
        for (const events of fresh) {
          for (const event of events) {
            if (event.seq <= last) continue;
            last = event.seq;
            yield event;
          }
        }
      } else {
        let batch: RunEvent[];
        do {
          batch = await readAfter(last, by);
          for (const event of batch) {
            if (event.seq <= last) continue;
            last = event.seq;
            yield event;
          }
        } while (batch.length === PAGE && !signal.aborted);
      }
      // Nothing more will come for a finished run whose terminal event the client already has.
      if (!statusChanged) continue;
      statusChanged = false;
      // A run announced as still going (running, idle, suspended: every answer's continuation) is not
      // read again: one SELECT of the run per status change per stream saved.
      if (announced !== undefined && !FINISHED_STATUSES.includes(announced)) continue;
      const run = await shared.run(`run\0${runId}`, by, () => store.getRun(runId));
      if (!run || FINISHED_STATUSES.includes(run.status)) {
        // Never shared: it must see every event committed before the status this read found.
        const tail = await readAfter(last, undefined);
        if (tail.length === 0) return;
        dirty = true;
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    await unsubscribe();
  }
}
