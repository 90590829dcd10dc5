import type { RunEvent } from '../events/index.js';
import type { InteractionPersistence, InteractionRequest, InteractionResponse, PriorOutcome } from '../interaction/index.js';
import type { LoopHooks, LoopState, RunOutcome } from '../loop/index.js';
import { LeaseLostError, type Store, type StoredRunStatus } from '../store/index.js';
import { splitLoopState, type LogPosition } from './checkpoint-codec.js';

export interface RecorderOptions {
  store: Store;
  runId: string;
  owner: string;
  position: LogPosition;
  /** Events between checkpoints are written this long after they happen (live SSE), ms. */
  flushDelayMs?: number;
  /** A request was committed and the run now waits for it. */
  onWaiting?(request: InteractionRequest): void;
  /** Another instance took the run over: stop driving it. */
  onLeaseLost?(error: LeaseLostError): void;
}

/**
 * Follows one live run into the store: buffers its events and writes them, in order, with each
 * checkpoint, tool intent and interaction; commits requests before anyone sees them; claims answers
 * atomically. All writes of a run go through one queue, so the log never reorders.
 */
export class RunRecorder implements InteractionPersistence {
  private buffer: RunEvent[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | undefined;
  private position: LogPosition;
  private readonly reported = new Set<string>();
  leaseLost: LeaseLostError | undefined;
  private finished = false;

  constructor(private readonly options: RecorderOptions) {
    this.position = options.position;
  }

  get runId(): string {
    return this.options.runId;
  }

  /** The loop's onEvent: synchronous, in seq order. */
  readonly onEvent = (event: RunEvent): void => {
    // After the final write, the same instance may already drive a new incarnation of the run whose
    // seqs continue from the log: a late event of this one (a lifecycle change while unwinding) must
    // not take a seq there.
    if (this.finished) return;
    this.buffer.push(event);
    if (!this.flushTimer && !this.leaseLost) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        void this.flush().catch(() => {});
      }, this.options.flushDelayMs ?? 20);
    }
  };

  readonly hooks: LoopHooks = {
    // Everything is taken from the live state now; the write may happen after the loop moved on.
    checkpoint: (state: LoopState) => {
      const parts = splitLoopState(state, this.position);
      this.position = parts.position;
      const toolResults = Object.entries(state.turnResults)
        .filter(([id]) => !this.reported.has(id))
        .map(([toolCallId, result]) => ({ toolCallId, result: { ...result } }));
      for (const r of toolResults) this.reported.add(r.toolCallId);
      const events = this.take();
      return this.enqueue(() =>
        this.options.store.write({
          runId: this.runId,
          owner: this.options.owner,
          events,
          checkpoint: parts.checkpoint,
          ...(parts.messages ? { messages: parts.messages } : {}),
          ...(parts.toolHistory ? { toolHistory: parts.toolHistory } : {}),
          ...(toolResults.length ? { toolResults } : {}),
        }),
      );
    },
    // Committed before the side effect starts: a crash after this point is reported, never re-run.
    toolIntent: (call) => {
      const events = this.take();
      return this.enqueue(() => this.options.store.write({ runId: this.runId, owner: this.options.owner, events, toolIntent: { ...call } }));
    },
  };

  async save(request: InteractionRequest): Promise<(PriorOutcome & { announce?: boolean }) | undefined> {
    const events = this.take();
    const prior = await this.enqueue(() => this.options.store.saveInteraction(request, { owner: this.options.owner, events }));
    if (!prior || prior.status === 'pending') this.options.onWaiting?.(prior?.request ?? request);
    return prior;
  }

  async claimAnswer(request: InteractionRequest, response: InteractionResponse): Promise<void> {
    // The loop is waiting in this process: the answer is handed to running code at once.
    await this.options.store.claimAnswer(request.id, response, { consumed: true });
  }

  async close(requestId: string, status: 'expired' | 'cancelled', reason: string): Promise<void> {
    await this.options.store.closeInteraction(requestId, status, reason);
  }

  /** Writes the buffered events now (also on a short timer, for live viewers). */
  flush(): Promise<void> {
    const events = this.take();
    if (events.length === 0) return this.queue.then(() => undefined);
    return this.enqueue(() => this.options.store.write({ runId: this.runId, owner: this.options.owner, events }));
  }

  /** Marks calls the resumed run reports as interrupted. */
  markInterrupted(toolCallIds: readonly string[]): Promise<void> {
    if (toolCallIds.length === 0) return Promise.resolve();
    return this.enqueue(() => this.options.store.write({ runId: this.runId, owner: this.options.owner, interruptedToolCalls: toolCallIds }));
  }

  /** The run ended or was suspended: the last events and the status, and the lease released. */
  async finish(outcome: RunOutcome): Promise<void> {
    const status: StoredRunStatus = outcome.status;
    const events = this.take();
    this.finished = true;
    const finished = status !== 'suspended';
    await this.enqueue(async () => {
      await this.options.store.write({
        runId: this.runId,
        owner: this.options.owner,
        events,
        run: {
          status,
          release: true,
          pendingInteractionId: outcome.pendingInteractionId ?? null,
          ...(finished ? { finalText: outcome.finalText, error: outcome.error ?? null } : {}),
        },
      });
      // Nothing may stay answerable on a finished run.
      if (finished) await this.options.store.closeRunInteractions(this.runId, `the run ended (${status})`);
    });
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

  private enqueue<T>(write: () => Promise<T>): Promise<T> {
    const result = this.queue.then(() => {
      if (this.leaseLost) throw this.leaseLost;
      return write();
    });
    this.queue = result.catch((error: unknown) => {
      if (error instanceof LeaseLostError && !this.leaseLost) {
        this.leaseLost = error;
        this.options.onLeaseLost?.(error);
      }
    });
    return result;
  }
}
