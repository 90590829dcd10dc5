import type { InteractionBroker, InteractionResponder } from './broker.js';
import type { InteractionRequest } from './request.js';
import type { InteractionResponse } from './response.js';

/**
 * The UI's side of an in-process channel: take the next request,
 * answer it. Answers go through the broker, so they are validated and the first one wins.
 */
export interface InputChannelHandle {
  /** The next request still pending, or null once the channel is closed. */
  nextRequest(options?: { signal?: AbortSignal }): Promise<InteractionRequest | null>;
  respond(response: unknown): Promise<InteractionResponse>;
  /** Requests currently pending, oldest first. */
  pending(): InteractionRequest[];
  /** Every request as it arrives, until the channel closes. */
  requests(): AsyncIterable<InteractionRequest>;
}

/** The loop's side: a responder that queues requests for the handle. */
export class InputChannel implements InteractionResponder {
  private queue: InteractionRequest[] = [];
  private waiters: Array<(request: InteractionRequest | null) => void> = [];
  private broker: InteractionBroker | undefined;
  private closed = false;
  readonly handle: InputChannelHandle;

  constructor() {
    this.handle = {
      nextRequest: (options) => this.next(options?.signal),
      respond: async (response) => {
        if (!this.broker) throw new Error('This channel is not attached to a run yet.');
        return this.broker.respond(response);
      },
      pending: () => [...this.queue],
      requests: () => this.iterate(),
    };
  }

  deliver(request: InteractionRequest, broker: InteractionBroker): void {
    this.broker = broker;
    const waiter = this.waiters.shift();
    if (waiter) waiter(request);
    this.queue.push(request);
  }

  withdraw(requestId: string): void {
    this.queue = this.queue.filter((r) => r.id !== requestId);
  }

  /** Binds the channel to a broker before any request arrives (so `respond` works at once). */
  attach(broker: InteractionBroker): void {
    this.broker = broker;
  }

  /** No more requests will come: waiting readers get null. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter(null);
  }

  private next(signal?: AbortSignal): Promise<InteractionRequest | null> {
    // A request already handed to a reader stays queued until answered; hand out the oldest one
    // that no reader has taken yet.
    const taken = this.handedOut;
    const ready = this.queue.find((r) => !taken.has(r.id));
    if (ready) {
      taken.add(ready.id);
      return Promise.resolve(ready);
    }
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter = (request: InteractionRequest | null) => {
        signal?.removeEventListener('abort', onAbort);
        if (request) taken.add(request.id);
        resolve(request);
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(null);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private readonly handedOut = new Set<string>();

  private async *iterate(): AsyncGenerator<InteractionRequest> {
    for (;;) {
      const request = await this.next();
      if (!request) return;
      yield request;
    }
  }
}

/** Creates the in-process pair: the channel for the loop, the handle for a UI. */
export function createInputChannel(): { channel: InputChannel; handle: InputChannelHandle } {
  const channel = new InputChannel();
  return { channel, handle: channel.handle };
}
