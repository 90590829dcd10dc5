import { chatTargetOf } from '../../runtime/chat-target.js';
import type { RunEvent } from '../../events/index.js';
import { committedEvents, continuesFrom, type RunRecord, type StoreNotification } from '../../store/index.js';
import type { ChatTarget } from './chat-target.js';
import type { HubContext } from './context.js';

/** The events flushEvents turns into chat messages. */
const CHAT_EVENT_TYPES = new Set(['message.completed', 'run.failed', 'run.cancelled']);

/** An interaction's notification, handed to the hub in its run's turn. */
export type OnInteraction = (
  target: ChatTarget,
  interactionId: string,
  status: string,
  nextMessage?: boolean,
) => Promise<void>;

/**
 * The store's notifications about chat runs, one update at a time per run in notification order:
 * the run's new events become chat messages, its asks go to `onInteraction`.
 */
export class RunUpdates {
  /** A run's chat, or null for a run that is no chat's. */
  private readonly targets = new Map<string, ChatTarget | null>();
  /** The last event of each chat run the chat was shown (or that had nothing to show). */
  private readonly cursors = new Map<string, number>();
  /**
   * A chat run's batches committed by this process since its last flush, with their events
   * (committedEvents): the flush shows them without reading the log when they carry on from the
   * cursor with no gap. 'read': one came without its events (another process wrote it): read the log.
   */
  private readonly pushed = new Map<string, (readonly RunEvent[])[] | 'read'>();
  private readonly runChains = new Map<string, Promise<unknown>>();
  /** Runs whose last queued update is a flush of events that has not started yet. */
  private readonly queuedFlush = new Map<string, object>();
  private readonly work = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(
    private readonly ctx: HubContext,
    private readonly onInteraction: OnInteraction,
  ) {}

  /** At start: a chat run not finished is shown from its last event on. */
  async index(run: RunRecord): Promise<void> {
    if (!this.targetOf(run)) return;
    this.cursors.set(run.id, await this.ctx.options.store.lastEventSeq(run.id));
  }

  /** A run this hub started for a chat: everything it says goes there. */
  watch(runId: string, target: ChatTarget): void {
    this.targets.set(runId, target);
    this.cursors.set(runId, 0);
  }

  /** The chat of a run, read from the store once. */
  async targetFor(runId: string): Promise<ChatTarget | null> {
    if (this.targets.has(runId)) return this.targets.get(runId) ?? null;
    const run = await this.ctx.options.store.getRun(runId);
    if (this.targets.size > 100_000) this.targets.clear();
    return run ? this.targetOf(run) : null;
  }

  /** Takes no more notifications. */
  halt(): void {
    this.stopped = true;
  }

  /** Waits for the updates under way. */
  async drain(): Promise<void> {
    while (this.work.size) await Promise.allSettled([...this.work]);
  }

  onNotification(n: StoreNotification): void {
    if (this.stopped) return;
    if (n.type === 'events') this.onEvents(n);
    else if (n.type === 'interaction') {
      this.queuedFlush.delete(n.runId);
      this.track(this.onRun(n.runId, (target) => this.onInteraction(target, n.interactionId, n.status, n.nextMessage)));
    }
  }

  private onEvents(n: Extract<StoreNotification, { type: 'events' }>): void {
    if (this.targets.get(n.runId)) {
      const events = committedEvents(n);
      const list = this.pushed.get(n.runId);
      if (!events) this.pushed.set(n.runId, 'read');
      else if (list === undefined) this.pushed.set(n.runId, [events]);
      else if (list !== 'read') list.push(events);
    }
    // A flush already queued last for this run reads these events too (it reads everything after
    // the run's cursor when its turn comes): one read of the store instead of one per commit. Only
    // when it is last, so the chat still sees events and prompts in the order they were committed.
    if (this.queuedFlush.has(n.runId)) return;
    // A batch with nothing a chat shows (tool calls, the ask's bookkeeping: three of a tap's four
    // batches) needs no read: the cursor moves past it. Every batch before it was notified before
    // it, so a flush for any of them with something to show is ahead of this step on the run's chain.
    if (n.types && !n.types.some((t) => CHAT_EVENT_TYPES.has(t))) {
      this.track(this.onRun(n.runId, async () => this.skipTo(n.runId, n.seq)));
      return;
    }
    const token = {};
    this.queuedFlush.set(n.runId, token);
    this.track(
      this.onRun(n.runId, (target) => {
        if (this.queuedFlush.get(n.runId) === token) this.queuedFlush.delete(n.runId);
        return this.flushEvents(n.runId, target);
      }),
    );
  }

  private skipTo(runId: string, seq: number): void {
    if ((this.cursors.get(runId) ?? 0) < seq) this.cursors.set(runId, seq);
    const list = this.pushed.get(runId);
    if (Array.isArray(list)) {
      const after = list.filter((events) => events.length > 0 && events[events.length - 1]!.seq > seq);
      if (after.length) this.pushed.set(runId, after);
      else this.pushed.delete(runId);
    }
  }

  private track<T>(promise: Promise<T>): void {
    const tracked = promise
      .catch((error: unknown) => this.ctx.options.log.error({ err: error }, 'channel update failed'))
      .finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  /** One update at a time per run, in notification order; a run that is no chat's has none. */
  private onRun(runId: string, step: (target: ChatTarget) => Promise<void>): Promise<void> {
    const next = (this.runChains.get(runId) ?? Promise.resolve()).then(async () => {
      const target = await this.targetFor(runId);
      if (!target) return;
      await step(target);
    });
    const kept = next.catch(() => {});
    this.runChains.set(runId, kept);
    void kept.then(() => {
      if (this.runChains.get(runId) === kept) this.runChains.delete(runId);
    });
    return next;
  }

  private targetOf(run: RunRecord): ChatTarget | null {
    const target = chatTargetOf(run);
    this.targets.set(run.id, target);
    return target;
  }

  /** The run's new events as chat messages: the agent's text, a failure, a stop. */
  private async flushEvents(runId: string, target: ChatTarget): Promise<void> {
    if (!this.ctx.adapters.has(target.channel)) return;
    const after = this.cursors.get(runId) ?? 0;
    // What this process committed since the cursor, if nothing is missing from it; else the log.
    const list = this.pushed.get(runId);
    this.pushed.delete(runId);
    const fresh = Array.isArray(list) && list.length > 0 && continuesFrom(list, after);
    const pushed = fresh ? list.flat().filter((e) => e.seq > after) : undefined;
    const events = pushed ?? (await this.ctx.options.store.readEvents(runId, { afterSeq: after, limit: 500 }));
    if (events.length === 0) return;
    this.cursors.set(runId, events[events.length - 1]!.seq);
    for (const event of events) {
      const text = chatTextOf(event);
      if (text) await this.ctx.say(target, text);
    }
    if (!pushed && events.length === 500) await this.flushEvents(runId, target);
  }
}

function chatTextOf(event: RunEvent): string | undefined {
  const data = event.data as { text?: unknown; message?: unknown; reason?: unknown };
  if (event.type === 'message.completed') return String(data.text ?? '').trim() || undefined;
  if (event.type === 'run.failed') return `⚠️ The run failed: ${String(data.message ?? '')}`;
  if (event.type === 'run.cancelled') return `⏹ Stopped: ${String(data.reason ?? '')}`;
  return undefined;
}
