import { isoNow } from './iso-time.js';
import { randomUUID } from 'node:crypto';
import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  InteractionNotFoundError,
} from './errors.js';
import type { InteractionDraft, InteractionRequest } from './request.js';
import type { InteractionResponse } from './response.js';
import { validateResponse } from './validate-response.js';
import { withFields } from './with-fields.js';

/** How an interaction ended, as the code that asked sees it. Never thrown: asked code must handle all three. */
export type InteractionOutcome =
  | { status: 'answered'; request: InteractionRequest; response: InteractionResponse }
  | { status: 'expired'; request: InteractionRequest; reason: string }
  | { status: 'cancelled'; request: InteractionRequest; reason: string };

/**
 * Where requests go to be answered: a terminal, a web page, an auto-responder. A responder answers
 * by calling `broker.respond()`, now or later, from anywhere.
 */
export interface InteractionResponder {
  deliver(request: InteractionRequest, broker: InteractionBroker): void;
  /** The request ended (answered elsewhere, expired, cancelled): stop showing it. */
  withdraw?(requestId: string, reason: string): void;
}

/**
 * The durable backend's hook (see the store): the request is committed before any responder sees
 * it, and an answer is claimed atomically, so the first valid answer wins across processes.
 */
export interface InteractionPersistence {
  /**
   * Commits the request. When a request with this id already exists (a resumed run asks again with
   * the same deterministic id), returns how it ended, or `pending` to keep waiting for it.
   */
  save(request: InteractionRequest): Promise<(PriorOutcome & { announce?: boolean }) | undefined>;
  /** Compare-and-set pending → answered; throws an InteractionError when not pending. */
  claimAnswer(request: InteractionRequest, response: InteractionResponse): Promise<void>;
  /**
   * Optional: records the answer with the run's next commit instead of a commit of its own. The
   * answer goes to the waiting code at once; the promise settles when it is committed, or fails
   * when it was not (answered elsewhere first, the run taken over): the code that took it then
   * writes nothing more, and the caller stores the answer the usual way.
   */
  deferAnswer?(request: InteractionRequest, response: InteractionResponse): Promise<void>;
  close(requestId: string, status: 'expired' | 'cancelled', reason: string): Promise<void>;
}

/** What the store already knows about a request asked again after a resume. */
export type PriorOutcome =
  | { status: 'pending'; request: InteractionRequest }
  | { status: 'answered'; request: InteractionRequest; response: InteractionResponse }
  | { status: 'expired' | 'cancelled'; request: InteractionRequest; reason: string };

export type BrokerEvent =
  | { type: 'interaction.requested'; data: { request: InteractionRequest } }
  | { type: 'interaction.answered'; data: { interactionId: string; response: InteractionResponse } }
  | { type: 'interaction.expired'; data: { interactionId: string; reason: string } }
  | { type: 'interaction.cancelled'; data: { interactionId: string; reason: string } };

/**
 * What `open` needs of a signal: an AbortSignal is one; so is a run's own stop (the loop's), which
 * tells its asks without an AbortSignal of its own (see RunContext.signal).
 */
export interface StopSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface OpenOptions {
  runId: string;
  signal?: StopSource;
  /** 0 or undefined: wait for ever. */
  timeoutMs?: number;
}

type Entry = {
  request: InteractionRequest;
  status: 'pending' | 'claiming' | 'answered' | 'expired' | 'cancelled';
  response?: InteractionResponse;
  reason?: string;
  settle?: (outcome: InteractionOutcome) => void;
  cleanup?: () => void;
  /** The request's save in flight: an answer or a close arriving meanwhile waits for it. */
  saving?: Promise<unknown>;
};

/** Finished entries kept to tell "already answered by X" from "unknown id". */
const FINISHED_KEPT = 1_000;

export interface BrokerOptions {
  responder?: InteractionResponder;
  persistence?: InteractionPersistence;
  onEvent?: (event: BrokerEvent) => void;
}

/**
 * Owns every pending interaction of one runtime: ids, timeouts, validation, first-answer-wins, and
 * a single cleanup path (timer cleared, abort listener removed, responder told) however it ends.
 */
export class InteractionBroker {
  private readonly entries = new Map<string, Entry>();
  private finishedOrder: string[] = [];
  responder: InteractionResponder | undefined;
  private readonly persistence: InteractionPersistence | undefined;
  onEvent: ((event: BrokerEvent) => void) | undefined;

  constructor(options: BrokerOptions = {}) {
    this.responder = options.responder;
    this.persistence = options.persistence;
    this.onEvent = options.onEvent;
  }

  /** Registers a request and waits for its outcome. */
  async open(draft: InteractionDraft, options: OpenOptions): Promise<InteractionOutcome> {
    const now = Date.now();
    // `{ ...draft, id, runId, createdAt, expiresAt? }`, without the slow spread (see withFields).
    const request = withFields(draft, { id: draft.id ?? `int_${randomUUID()}`, runId: options.runId, createdAt: isoNow(now) }) as InteractionRequest;
    if (options.timeoutMs) request.expiresAt = new Date(now + options.timeoutMs).toISOString();
    if (this.entries.has(request.id)) throw new Error(`Interaction id "${request.id}" is already in use.`);
    if (options.signal?.aborted) {
      return { status: 'cancelled', request, reason: 'the run was cancelled' };
    }
    const entry: Entry = { request, status: 'pending' };
    this.entries.set(request.id, entry);
    let resumed = false;
    if (this.persistence) {
      const saving = this.persistence.save(request);
      entry.saving = saving.catch(() => {});
      let prior: Awaited<typeof saving>;
      try {
        prior = await saving;
      } finally {
        entry.saving = undefined;
      }
      if (prior && prior.status !== 'pending') {
        // Answered (or ended) before a restart: the answer is used, nobody is asked twice.
        entry.request = prior.request;
        entry.status = prior.status;
        if (prior.status === 'answered') entry.response = prior.response;
        else entry.reason = prior.reason;
        this.finish(entry, prior);
        // Answered from another process while nobody ran the loop: log it once, when the loop receives it.
        if (prior.announce) this.onEvent?.(priorEvent(prior));
        return withoutAnnounce(prior);
      }
      if (prior) {
        entry.request = prior.request;
        resumed = true;
      }
    }

    const outcome = new Promise<InteractionOutcome>((resolve) => {
      entry.settle = resolve;
    });
    let timer: NodeJS.Timeout | undefined;
    if (options.timeoutMs) {
      const seconds = Math.round(options.timeoutMs / 100) / 10;
      timer = setTimeout(() => void this.close(request.id, 'expired', `no one answered within ${seconds} s`).catch(() => {}), options.timeoutMs);
    }
    const onAbort = () => {
      const reason = options.signal?.reason as { kind?: string } | undefined;
      if (reason?.kind === 'suspend') this.detach(request.id);
      else void this.close(request.id, 'cancelled', 'the run was cancelled').catch(() => {});
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // Not `entry.cleanup = () => …`: a function literal assigned straight to a property is taken for
    // a long-lived method, so this one, dead after the answer, would keep the entry, its request and
    // the run behind it until the next full collection. Made as a local it dies young
    // (pretenured-closures.test.ts checks it).
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    entry.cleanup = cleanup;
    // A request still pending from before a restart was announced then; deliver it again only.
    if (!resumed) this.onEvent?.({ type: 'interaction.requested', data: { request: entry.request } });
    // Aborted while the request was being saved (a suspension or a cancel racing the commit): the
    // listener above never fires for a signal that was already aborted.
    if (options.signal?.aborted) {
      onAbort();
      return outcome;
    }
    this.responder?.deliver(entry.request, this);
    return outcome;
  }

  /**
   * Answers a pending request. Validates the response against it; the first valid answer wins and a
   * later one is refused with a typed error saying who answered and when.
   */
  async respond(raw: unknown): Promise<InteractionResponse> {
    const requestId = typeof raw === 'object' && raw !== null ? (raw as { requestId?: unknown }).requestId : undefined;
    const entry = typeof requestId === 'string' ? this.entries.get(requestId) : undefined;
    if (!entry) throw new InteractionNotFoundError(String(requestId));
    this.assertPending(entry);
    // Answered while the request is still being saved: let open() finish first (it then waits for
    // the outcome), or the answer would settle an outcome nobody is listening to yet.
    if (entry.saving) {
      await entry.saving;
      this.assertPending(entry);
    }
    const response = validateResponse(entry.request, raw);
    entry.status = 'claiming';
    if (this.persistence?.deferAnswer) {
      const committed = this.persistence.deferAnswer(entry.request, response);
      this.deliver(entry, response);
      await committed;
      return response;
    }
    if (this.persistence) {
      try {
        await this.persistence.claimAnswer(entry.request, response);
      } catch (error) {
        if (entry.status === 'claiming') entry.status = 'pending';
        throw error;
      }
    }
    this.deliver(entry, response);
    return response;
  }

  /**
   * Ends a pending request with an answer another process already stored (and claimed there: the
   * first answer won in the store), without a claim of its own: the waiting code gets it and the
   * listeners hear it, once. False when the request is not pending here (settled meanwhile).
   */
  async answeredElsewhere(requestId: string, response: InteractionResponse): Promise<boolean> {
    const entry = this.entries.get(requestId);
    // Still being saved: open() takes its own outcome first (its save may return this answer).
    if (entry?.saving) await entry.saving;
    if (!entry || entry.status !== 'pending' || this.entries.get(requestId) !== entry) return false;
    this.deliver(entry, response);
    return true;
  }

  private deliver(entry: Entry, response: InteractionResponse): void {
    entry.status = 'answered';
    entry.response = response;
    this.finish(entry, { status: 'answered', request: entry.request, response });
    this.onEvent?.({ type: 'interaction.answered', data: { interactionId: entry.request.id, response } });
  }

  /** Ends a pending request without an answer. Returns false when it was not pending. */
  async close(requestId: string, status: 'expired' | 'cancelled', reason: string): Promise<boolean> {
    let entry = this.entries.get(requestId);
    if (entry?.saving) {
      await entry.saving;
      entry = this.entries.get(requestId);
    }
    if (!entry || entry.status !== 'pending') return false;
    entry.status = status;
    entry.reason = reason;
    this.finish(entry, { status, request: entry.request, reason });
    this.onEvent?.({
      type: status === 'expired' ? 'interaction.expired' : 'interaction.cancelled',
      data: { interactionId: requestId, reason },
    });
    if (this.persistence) await this.persistence.close(requestId, status, reason);
    return true;
  }

  /**
   * Forgets a pending request in this process without closing it: the run was suspended and the
   * request stays open in the store, to be answered from anywhere.
   */
  detach(requestId: string): void {
    const entry = this.entries.get(requestId);
    if (!entry || entry.status !== 'pending') return;
    entry.status = 'cancelled';
    entry.reason = 'the run was suspended';
    this.finish(entry, { status: 'cancelled', request: entry.request, reason: entry.reason });
    this.entries.delete(requestId);
  }

  /** Cancels every pending request (used when a run is cancelled or suspended). */
  async cancelAll(reason: string, runId?: string): Promise<void> {
    const ids = [...this.entries.values()]
      .filter((e) => e.status === 'pending' && (runId === undefined || e.request.runId === runId))
      .map((e) => e.request.id);
    await Promise.all(ids.map((id) => this.close(id, 'cancelled', reason)));
  }

  /** Requests still waiting for an answer, oldest first. */
  pending(runId?: string): InteractionRequest[] {
    const out: InteractionRequest[] = [];
    for (const entry of this.entries.values()) {
      if (entry.status === 'pending' && (runId === undefined || entry.request.runId === runId)) out.push(entry.request);
    }
    return out;
  }

  /** The request with this id, pending or finished (while it is remembered). */
  get(requestId: string): { request: InteractionRequest; status: Entry['status']; response?: InteractionResponse; reason?: string } | undefined {
    const entry = this.entries.get(requestId);
    if (!entry) return undefined;
    return { request: entry.request, status: entry.status, response: entry.response, reason: entry.reason };
  }

  isPending(requestId: string): boolean {
    return this.entries.get(requestId)?.status === 'pending';
  }

  /** Pending, and its save still in flight: the save may yet return an answer stored before it. */
  isSaving(requestId: string): boolean {
    return this.entries.get(requestId)?.saving !== undefined;
  }

  private assertPending(entry: Entry): void {
    const id = entry.request.id;
    switch (entry.status) {
      case 'pending':
        return;
      case 'claiming':
      case 'answered':
        throw new InteractionAlreadyAnsweredError(id, entry.response?.userId, entry.response?.respondedAt);
      case 'expired':
        throw new InteractionExpiredError(id, entry.request.expiresAt);
      case 'cancelled':
        throw new InteractionCancelledError(id, entry.reason ?? 'cancelled');
    }
  }

  private finish(entry: Entry, outcome: InteractionOutcome): void {
    entry.cleanup?.();
    entry.cleanup = undefined;
    const settle = entry.settle;
    entry.settle = undefined;
    settle?.(outcome);
    this.responder?.withdraw?.(entry.request.id, outcome.status);
    this.finishedOrder.push(entry.request.id);
    if (this.finishedOrder.length > FINISHED_KEPT * 2) {
      for (const id of this.finishedOrder.splice(0, this.finishedOrder.length - FINISHED_KEPT)) this.entries.delete(id);
    }
  }
}

/** The outcome a prior one gives the asking code: the same fields, less the persistence's `announce` flag. */
function withoutAnnounce(prior: Exclude<PriorOutcome, { status: 'pending' }> & { announce?: boolean }): InteractionOutcome {
  // Copied key by key, in order (a rest pattern takes a slow generic path on every resumed ask).
  const outcome: Record<string, unknown> = {};
  for (const key in prior) if (key !== 'announce') outcome[key] = prior[key as keyof typeof prior];
  return outcome as InteractionOutcome;
}

function priorEvent(prior: Exclude<PriorOutcome, { status: 'pending' }>): BrokerEvent {
  if (prior.status === 'answered') return { type: 'interaction.answered', data: { interactionId: prior.request.id, response: prior.response } };
  return {
    type: prior.status === 'expired' ? 'interaction.expired' : 'interaction.cancelled',
    data: { interactionId: prior.request.id, reason: prior.reason },
  };
}
