import type { InteractionBroker, InteractionResponse } from '../interaction/index.js';
import type { Run, RunOutcome } from '../loop/index.js';
import type { Store } from '../store/index.js';
import type { RunLeftError, RunRebuildError } from './errors.js';
import { DictMap, DictSet } from './dict-collections.js';
import type { RunRecorder } from './run-recorder.js';
import type { DurableRunner } from './durable-runner.js';
import type { DurableRuntime } from './runtime.js';
import type { StoredRunOptionsInput } from './stored-options.js';

// What the runner's steps share: its options and the runs it drives or is rebuilding. The steps
// are drive-run.ts (claim, rebuild, drive, settle), answer-routing.ts (answers, wakes, cancels
// from elsewhere) and maintenance.ts (leases, expiry, takeover); durable-runner.ts is the surface.

export interface DurableRunnerOptions {
  store: Store;
  runtime: DurableRuntime;
  /** This process's name in leases; default `host:pid:random`. */
  instanceId?: string;
  /** How long a lease lasts without renewal, ms. Default 30 s. */
  leaseMs?: number;
  /**
   * How long a run waits in memory for an answer before it is released (suspended), ms. 0 releases
   * it as soon as it asks (nobody is there: `--detach`, `sage respond`). Default 5 minutes.
   */
  idleSuspendMs?: number;
  /**
   * How long a run whose task is done and that waits for its next message (`idle`) stays in memory,
   * ms; default idleSuspendMs. 0 releases it at that ask, in the same commit as its last step: a
   * server then holds memory only for runs that need a person's answer to go on (an approval, a
   * question), not for every finished chat, and a next message resumes the idle run from the store
   * (a rebuild of a few ms, for a message a person typed).
   */
  idleRunSuspendMs?: number;
  /**
   * At most this many runs wait for an answer in this process's memory; when one more starts
   * waiting, the one whose wait began longest ago is released to the store (suspended, as the idle
   * release does) and resumed from it when its answer comes. Bounds a server's memory by waiting
   * runs (each holds its loop, messages, broker and tools)
   * instead of by how many people have not answered yet. 0 keeps none; default: no cap (a run
   * with a person at its terminal is never released for another's sake). Runs held while they
   * wait (an external agent's) are not counted and never released.
   */
  maxWaitingInMemory?: number;
  /**
   * Events of a run kept in memory for an iterator of `handle.run` that has not started yet (its
   * events are all in the store either way); default 256. A server sets 0: its runs are never
   * iterated in process (streams read the store), and every waiting chat would hold its events.
   */
  unreadEventLimit?: number;
  /** Renew leases, expire requests (and with autoRecover, take over orphans) this often, ms. Default leaseMs / 3. */
  maintenanceIntervalMs?: number;
  /** Take over dead instances' runs and resume answered ones on every maintenance tick (servers). */
  autoRecover?: boolean;
  /** Events between checkpoints are written this long after they happen, ms. Default 20. */
  flushDelayMs?: number;
  /**
   * How often a run waiting here looks in the store for an answer (or a cancel, an expiry) that
   * reached the store without reaching this process, ms; 0 never. The backstop under notifications:
   * another process's answer on SQLite (no cross-process push), a Postgres NOTIFY lost while the
   * LISTEN connection was down, an answering process that died before it sent its wake. Default
   * 250 on SQLite (skipped while PRAGMA data_version says no other process committed), 500 on Postgres.
   */
  wakePollMs?: number;
  /**
   * A stored run could not be rebuilt here and was marked failed (see RunRebuildError). Default:
   * one line on stderr. A server passes its logger.
   */
  onRunFailed?(error: RunRebuildError): void;
}

export interface StartOptions extends StoredRunOptionsInput {
  runId?: string;
  userId?: string;
  sessionId?: string;
  channel?: string;
}

/** A run driven by this process. `outcome` settles after the final state is in the store. */
export interface DurableRunHandle {
  runId: string;
  run: Run;
  outcome: Promise<DurableOutcome>;
}

export interface DurableOutcome extends RunOutcome {
  /** Another instance took the run over; nothing more was written by this one. */
  leaseLost?: boolean;
  /** A write failed on the store (`store_unavailable`, `disk_full`): the run resumes from its last commit when it is back. */
  storeFault?: string;
}

/**
 * Where an answer went: `live` to the loop waiting here, `resumed` the run here (handle), `notified`
 * the live instance that drives it, `stored` only (someone else resumes it, or the run ended).
 */
export type Delivery = { delivered: 'live' | 'notified' | 'stored' } | { delivered: 'resumed'; handle: DurableRunHandle };
export type RespondResult = { response: InteractionResponse } & Delivery;

export interface RecoverResult {
  /** Runs this process now drives. */
  resumed: string[];
  expired: string[];
  /** Runs not resumed because their settings files do not load (left as they were). */
  left: RunLeftError[];
}

export interface LiveRun {
  handle: DurableRunHandle;
  broker: InteractionBroker;
  recorder: RunRecorder;
  /** The idle release armed: a timer, or at idleSuspendMs 0 a microtask's token (cancelled when disarmed). */
  idleTimer?: NodeJS.Timeout | { cancelled: boolean };
  /** An answer or a cancel arrived through the store for a request this process was waiting on. */
  wake?: 'answered' | 'cancel';
  /** Never released while it waits: its work lives in this process (an external agent's process). */
  hold?: boolean;
  /** The requests committed with the write that released the run (see watchRelease in drive-run.ts). */
  releasedWith?: ReadonlySet<string>;
  /** Suspends the run if it still waits (the idle release's body, also the cap's); set while armed. */
  release?: (reason?: string) => void;
}

/** The state one DurableRunner's steps share. */
export class RunnerState {
  /** Not a Map (nor `waiting` and `settling` a Set): see dict-collections.ts (what a run leaves behind for the GC). */
  readonly live = new DictMap<LiveRun>();
  /**
   * Runs being claimed and rebuilt here (between the decision to resume and the loop being live).
   * A second resume of the same run — a wake, an answer, a maintenance sweep — joins this one
   * instead of claiming it again: the claim succeeds for the same instance, so two loops would
   * otherwise drive one run.
   */
  readonly starting = new Map<string, Promise<DurableRunHandle>>();
  readonly settling = new DictSet<Promise<unknown>>();
  closed = false;
  /** This process recorded as the owner its leases name (dead-owners.ts: registerOwner). */
  ownerRegistration: Promise<void> | undefined;
  polling: Promise<void> | undefined;
  /** The store's data version at the last look for settled requests (SQLite); undefined: look. */
  seenVersion: number | undefined;
  /**
   * Live runs waiting for an answer with their idle release armed, the longest-waiting first (it
   * iterates in insertion order; a run that waits again is re-inserted at the end): what
   * maxWaitingInMemory releases first.
   */
  readonly waiting = new DictSet<LiveRun>();
  /** A release of the longest-waiting runs beyond maxWaitingInMemory is queued (setImmediate). */
  trimQueued = false;
  /** Runs whose incarnation here stopped on a store fault, to resume once it is back (store-fault-resume.ts). */
  readonly faulted = new Set<string>();
  faultTimer: NodeJS.Timeout | undefined;
  /** The pass over them running now (close waits for it: nothing is resumed after). */
  faultRetry: Promise<unknown> | undefined;

  constructor(
    readonly store: Store,
    readonly options: DurableRunnerOptions,
    readonly instanceId: string,
    readonly leaseMs: number,
    /** The runner these steps belong to (tools of a run may start runs of their own through it). */
    readonly runner: DurableRunner,
  ) {}

  /** At most one claim-and-rebuild of a run at a time in this process; a live run is returned as is. */
  once(runId: string, start: () => Promise<DurableRunHandle>): Promise<DurableRunHandle> {
  const existing = this.live.get(runId);
  if (existing) return Promise.resolve(existing.handle);
  const inFlight = this.starting.get(runId);
  if (inFlight) return inFlight;
  const started = start();
  this.starting.set(runId, started);
  const clear = () => {
    if (this.starting.get(runId) === started) this.starting.delete(runId);
  };
  started.then(clear, clear);
  return started;
}
}
