import { randomUUID } from 'node:crypto';
import type { DurableRunner, StartOptions } from '../durable/index.js';
import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  InteractionNotFoundError,
  InvalidResponseError,
  interactionResponseSchema,
  type InteractionResponse,
} from '../interaction/index.js';
import type { RunRequest, ServerGrant } from '../runtime/create-run.js';
import { chatTargetOf } from '../runtime/chat-target.js';
import type { RunEvent } from '../events/index.js';
import {
  committedEvents,
  continuesFrom,
  FINISHED_STATUSES,
  isNextMessageRequest,
  type InteractionRecord,
  type QueuedChatMessage,
  type RunRecord,
  type Store,
  type StoreNotification,
  type Unsubscribe,
} from '../store/index.js';
import type { ChannelAdapter, ChannelCommonConfig, ChannelLogger, InboundMessage, InboundResult, MessageRef, RenderedApproval } from './adapter.js';
import { MessageBus } from './bus.js';
import { parseChatCommand } from './commands.js';
import { chatIdentity, senderOfPrincipal } from './identity.js';
import { renderInteraction, shortIdOf, SHORT_ID_LENGTH } from './render.js';
import { askContextFor } from '../runtime/ask-context.js';

/** Where a chat run's replies and asks go. */
export interface ChatTarget {
  channel: string;
  chatId: string;
  threadId?: string;
}

export interface HubChannel {
  adapter: ChannelAdapter;
  config: ChannelCommonConfig;
}

export interface ChannelHubOptions {
  store: Store;
  runner: DurableRunner;
  /** The run factory's `admitRun` (the one way a run is described). */
  admitRun: (request: RunRequest) => Promise<StartOptions>;
  /** The server's model for chat runs (`--model`, SAGE_MODEL). */
  model: () => string;
  /** The folder a chat's runs work in: the channel's `cwd` checked against the server's roots. */
  cwd: (requested: string | undefined) => string;
  /** The server's grant each chat run is admitted with (its role, the policy's deny/ask lists now). */
  serverGrant: () => ServerGrant;
  channels: readonly HubChannel[];
  log: ChannelLogger;
  /** Overrides every channel's approval timeout (tests). */
  interactionTimeoutMs?: number;
  /** A channel's `agent`: the server's policy checks it and the host's settings give its command. */
  agentRun?: (name: string, cwd: string) => Pick<RunRequest, 'agent' | 'chain'>;
  /**
   * The server's per-user limits for a new run of `userId` (the sender's principal or mapped user):
   * rejects when they hold too many runs or waiting asks, as a web user would be refused.
   */
  assertRunCapacity?: (userId: string) => Promise<void>;
}

interface Prompt {
  interactionId: string;
  runId: string;
  /** The 12-character form; people see its first 6. */
  matchId: string;
  target: ChatTarget;
  kind: RenderedApproval['kind'];
  text?: string;
  ref?: MessageRef;
}

interface Closed extends Prompt {
  outcome: string;
}

interface Session {
  target: ChatTarget;
  runId?: string;
  chain: Promise<unknown>;
}

/** H5's `channel` field on answers, when this build has it (the schema is strict). */
const ANSWER_HAS_CHANNEL = 'channel' in interactionResponseSchema.shape;
const MAX_CLOSED = 10_000;
/** The events flushEvents turns into chat messages. */
const CHAT_EVENT_TYPES = new Set(['message.completed', 'run.failed', 'run.cancelled']);

/** sessionKey(a) === sessionKey(b), without building the strings. */
function sameChat(a: ChatTarget, b: ChatTarget): boolean {
  return a.chatId === b.chatId && a.channel === b.channel && (a.threadId ?? '') === (b.threadId ?? '');
}

function sessionKey(t: ChatTarget): string {
  return `${t.channel}:${t.chatId}${t.threadId ? `:${t.threadId}` : ''}`;
}

function pushTo<T>(index: Map<string, T[]>, key: string, item: T): void {
  const list = index.get(key);
  if (list) list.push(item);
  else index.set(key, [item]);
}

function dropFrom<T>(index: Map<string, T[]>, key: string, item: T): void {
  const list = index.get(key);
  if (!list) return;
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) index.delete(key);
}

/** What a chat's outcome line ("Approved by alice in slack at 14:02 UTC") is made of. */
type OutcomeFacts = Pick<InteractionRecord, 'id' | 'kind' | 'status' | 'response' | 'answeredBy' | 'answeredAt' | 'closedAt' | 'reason'>;

/**
 * An ask this hub answered, as the store recorded it (answered_by is the response's userId,
 * answered_at its respondedAt; a response's kind is its request's, validated).
 */
function answeredFacts(interactionId: string, response: InteractionResponse): OutcomeFacts {
  return { id: interactionId, kind: response.kind, status: 'answered', response, answeredBy: response.userId ?? null, answeredAt: response.respondedAt, closedAt: response.respondedAt, reason: null };
}

/** What the store keeps of a queued message: enough to hand it over and to know its chat again. */
function storedMessage(m: InboundMessage): Record<string, unknown> {
  return {
    channel: m.channel,
    chatId: m.chatId,
    ...(m.threadId ? { threadId: m.threadId } : {}),
    senderId: m.senderId,
    ...(m.senderName ? { senderName: m.senderName } : {}),
    text: m.text,
  };
}

function queuedMessage(q: QueuedChatMessage): InboundMessage {
  const s = q.message;
  return {
    channel: String(s['channel']),
    chatId: String(s['chatId']),
    ...(typeof s['threadId'] === 'string' ? { threadId: s['threadId'] } : {}),
    senderId: String(s['senderId']),
    ...(typeof s['senderName'] === 'string' ? { senderName: s['senderName'] } : {}),
    text: String(s['text'] ?? ''),
  };
}

/** Queued messages reach the run as one message, in order. */
function joinTexts(messages: readonly InboundMessage[]): string {
  return messages.map((m) => m.text).join('\n\n');
}

function hhmm(iso: string | null | undefined): string {
  return iso ? `${iso.slice(11, 16)} UTC` : 'an unknown time';
}

function via(channel: string | undefined): string {
  if (!channel) return '';
  if (channel === 'web') return ' in the web page';
  if (channel === 'cli') return ' with sage respond';
  return ` in ${channel}`;
}

/**
 * A message in parts of at most `max` characters, cut at line ends where it can (a part never
 * ends inside a line unless that line alone is too long): joined with newlines they give it back.
 */
export function splitText(text: string, max: number | undefined): string[] {
  if (!max || text.length <= max) return [text];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const cut = rest.lastIndexOf('\n', max);
    if (cut > 0) {
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut + 1);
    } else {
      parts.push(rest.slice(0, max));
      rest = rest.slice(max);
    }
  }
  parts.push(rest);
  return parts;
}

/**
 * An approval prompt that fits one message: it cannot be split (its buttons belong to one
 * message), so an over-long middle (a huge title or reason) is cut and the first line (the id)
 * and the last (the typed commands) are kept, which is all a person needs to answer it.
 */
function fitPrompt(text: string, max: number | undefined): string {
  if (!max || text.length <= max) return text;
  const lines = text.split('\n');
  const head = lines[0]!;
  const tail = lines.length > 1 ? lines[lines.length - 1]! : '';
  const room = max - head.length - tail.length - 3;
  if (room < 1) return `${text.slice(0, max - 1)}…`;
  return `${head}\n${lines.slice(1, -1).join('\n').slice(0, room)}…\n${tail}`;
}

/**
 * The channel core: sessions per chat, runs started and continued from chat messages, asks shown
 * in the chat they belong to and answered from any chat (or the web page, `sage respond`): the
 * store's exactly-once claim decides and every prompt is edited to say who answered, where and when.
 * Everything it shows is derived from store notifications, so answers given elsewhere update it too.
 */
export class ChannelHub {
  readonly bus: MessageBus;
  private readonly adapters = new Map<string, ChannelAdapter>();
  private readonly configs = new Map<string, ChannelCommonConfig>();
  private readonly pending = new Map<string, Prompt>();
  private readonly closed = new Map<string, Closed>();
  /**
   * The same asks by the short id people see (its first SHORT_ID_LENGTH characters) and by chat: a
   * tap, a typed id, a bare yes and every message to the agent look up their few asks there instead
   * of going over every chat's (1,000 wait at once in bench/channels.ts).
   */
  private readonly openByShort = new Map<string, Prompt[]>();
  private readonly openByChat = new Map<string, Prompt[]>();
  private readonly closedByShort = new Map<string, Closed[]>();
  /**
   * Answers given through this hub, until their notification: the runner's result is what the store
   * recorded (the response, its userId and respondedAt become answered_by and answered_at), so the
   * prompt's edit needs no read of the record back. Undefined when the answer was refused.
   */
  private readonly answers = new Map<string, Promise<InteractionResponse | undefined>>();
  /**
   * Chats that may have messages in the store's queue. Only this hub queues messages for its
   * channels' chats (recoverQueue, enqueue, a release), so a chat not here has none and its next-message
   * ask or new run needs no read of the queue: one read fewer per turn of every chat.
   */
  private readonly maybeQueued = new Set<string>();
  private readonly sessions = new Map<string, Session>();
  private readonly targets = new Map<string, ChatTarget | null>();
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
  /** Which channel answered an interaction through this hub (until the answer schema carries it). */
  private readonly answeredVia = new Map<string, string>();
  /** Display names of the people who wrote here (`channel`, their identity → name), for "approved by alice". */
  private readonly names = new Map<string, string>();
  private unsubscribe: Unsubscribe | undefined;
  private stopped = false;
  private readonly work = new Set<Promise<unknown>>();

  constructor(private readonly options: ChannelHubOptions) {
    for (const { adapter, config } of options.channels) {
      this.adapters.set(adapter.name, adapter);
      this.configs.set(adapter.name, config);
    }
    this.bus = new MessageBus(this.adapters, options.log);
    this.bus.setInboundApprovalCheck((m) => this.inboundCheck(m));
    this.bus.consumeInbound((m) => this.toAgent(m));
  }

  /** Indexes what waits in the store, subscribes to its notifications, then starts the adapters. */
  async start(): Promise<string[]> {
    const { store, log } = this.options;
    const queued = await this.recoverQueue();
    this.unsubscribe = await store.subscribe('*', (n) => this.onNotification(n));
    for (const run of await store.listRuns({ status: ['running', 'idle', 'suspended'], limit: 10_000 })) {
      if (!this.targetOf(run)) continue;
      this.cursors.set(run.id, await store.lastEventSeq(run.id));
    }
    for (const record of await store.listInteractions({ status: ['pending'], limit: 10_000 })) {
      const target = await this.targetFor(record.runId);
      if (!target || isNextMessageRequest(record.request)) continue;
      // Prompted before the restart: the message is in the chat already; a tap brings its ref. Its
      // text is rendered again (the same text: it derives from the record) so the answer can edit it.
      const prompt = this.promptOf(record, target);
      const adapter = this.adapters.get(target.channel);
      const context = await askContextFor(store, record);
      const rendered = adapter ? renderInteraction(record, adapter.limits, context) : undefined;
      if (rendered) prompt.text = fitPrompt(rendered.text, adapter!.limits.maxText);
      this.addPending(prompt);
    }
    const lines: string[] = [];
    for (const adapter of this.adapters.values()) {
      const info = await adapter.start((m) => this.bus.publishInbound(m));
      log.info({ channel: adapter.name }, `channel ${adapter.name}: ${info.description}`);
      lines.push(`${adapter.name}: ${info.description}`);
    }
    // Messages queued before the restart whose run now waits for its next message: hand them over.
    // One chat's failure is logged and the others go on: the messages stay queued for the run's next ask.
    for (const target of queued) {
      await this.inSession(target, (session) => this.deliverWaiting(target, session)).catch((error: unknown) =>
        log.error({ err: error, channel: target.channel, chatId: target.chatId }, 'queued messages not handed over at start'),
      );
    }
    return lines;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.unsubscribe?.();
    // Queued messages are in the store (committed before the chat was told "Queued"): nothing to say
    // here; the next start hands them to their run.
    for (const adapter of this.adapters.values()) await adapter.stop();
    while (this.work.size) await Promise.allSettled([...this.work]);
  }

  /** Asks waiting in a chat (for `/status` and tests). */
  waitingIn(target: ChatTarget): Prompt[] {
    return [...(this.openByChat.get(sessionKey(target)) ?? [])];
  }

  private addPending(prompt: Prompt): void {
    this.pending.set(prompt.interactionId, prompt);
    pushTo(this.openByShort, prompt.matchId.slice(0, SHORT_ID_LENGTH), prompt);
    pushTo(this.openByChat, sessionKey(prompt.target), prompt);
  }

  private removePending(prompt: Prompt): void {
    this.pending.delete(prompt.interactionId);
    dropFrom(this.openByShort, prompt.matchId.slice(0, SHORT_ID_LENGTH), prompt);
    dropFrom(this.openByChat, sessionKey(prompt.target), prompt);
  }

  // ── store notifications ────────────────────────────────────────────────────────────────────

  private track<T>(promise: Promise<T>): void {
    const tracked = promise.catch((error: unknown) => this.options.log.error({ err: error }, 'channel update failed')).finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  private onNotification(n: StoreNotification): void {
    if (this.stopped) return;
    if (n.type === 'events') {
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
        const seq = n.seq;
        this.track(
          this.onRun(n.runId, async () => {
            if ((this.cursors.get(n.runId) ?? 0) < seq) this.cursors.set(n.runId, seq);
            const list = this.pushed.get(n.runId);
            if (Array.isArray(list)) {
              const after = list.filter((events) => events.length > 0 && events[events.length - 1]!.seq > seq);
              if (after.length) this.pushed.set(n.runId, after);
              else this.pushed.delete(n.runId);
            }
          }),
        );
        return;
      }
      const token = {};
      this.queuedFlush.set(n.runId, token);
      this.track(
        this.onRun(n.runId, () => {
          if (this.queuedFlush.get(n.runId) === token) this.queuedFlush.delete(n.runId);
          return this.flushEvents(n.runId);
        }),
      );
    } else if (n.type === 'interaction') {
      this.queuedFlush.delete(n.runId);
      this.track(this.onRun(n.runId, () => this.onInteraction(n.runId, n.interactionId, n.status, n.nextMessage)));
    }
  }

  /** One update at a time per run, in notification order. */
  private onRun(runId: string, step: () => Promise<void>): Promise<void> {
    const next = (this.runChains.get(runId) ?? Promise.resolve()).then(async () => {
      if (!(await this.targetFor(runId))) return;
      await step();
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

  private async targetFor(runId: string): Promise<ChatTarget | null> {
    if (this.targets.has(runId)) return this.targets.get(runId) ?? null;
    const run = await this.options.store.getRun(runId);
    if (this.targets.size > 100_000) this.targets.clear();
    return run ? this.targetOf(run) : null;
  }

  /** The run's new events as chat messages: the agent's text, a failure, a stop. */
  private async flushEvents(runId: string): Promise<void> {
    const target = (await this.targetFor(runId))!;
    if (!this.adapters.has(target.channel)) return;
    const after = this.cursors.get(runId) ?? 0;
    // What this process committed since the cursor, if nothing is missing from it; else the log.
    const list = this.pushed.get(runId);
    this.pushed.delete(runId);
    const pushed = Array.isArray(list) && list.length > 0 && continuesFrom(list, after) ? list.flat().filter((e) => e.seq > after) : undefined;
    const events = pushed ?? (await this.options.store.readEvents(runId, { afterSeq: after, limit: 500 }));
    if (events.length === 0) return;
    this.cursors.set(runId, events[events.length - 1]!.seq);
    for (const event of events) {
      let text: string | undefined;
      if (event.type === 'message.completed') text = String((event.data as { text?: unknown }).text ?? '').trim() || undefined;
      else if (event.type === 'run.failed') text = `⚠️ The run failed: ${String((event.data as { message?: unknown }).message ?? '')}`;
      else if (event.type === 'run.cancelled') text = `⏹ Stopped: ${String((event.data as { reason?: unknown }).reason ?? '')}`;
      if (text) await this.say(target, text);
    }
    if (!pushed && events.length === 500) await this.flushEvents(runId);
  }

  private async onInteraction(runId: string, interactionId: string, status: string, nextMessage?: boolean): Promise<void> {
    const target = (await this.targetFor(runId))!;
    if (status === 'pending') {
      if (this.pending.has(interactionId)) return;
      if (nextMessage) {
        // The run waits for its next message: only what the chat queued goes to it, and a chat with
        // nothing queued (most) needs no read of the ask. Decided in the chat's session, after any
        // message being queued there (enqueue marks the chat before its commit).
        await this.inSession(target, async (session) => {
          if (!this.maybeQueued.has(sessionKey(target))) return;
          const record = await this.options.store.getInteraction(interactionId);
          if (record?.status === 'pending') await this.deliverQueued(target, session, record);
        });
        return;
      }
      const record = await this.options.store.getInteraction(interactionId);
      if (!record || record.status !== 'pending') return;
      if (isNextMessageRequest(record.request)) {
        await this.inSession(target, (session) => this.deliverQueued(target, session, record));
        return;
      }
      await this.prompt(record, target);
      return;
    }
    // The answer this hub gave, if it did: awaited (its notification can come before the runner's
    // reply) and then forgotten, whether or not a prompt shows it.
    const mine = this.answers.get(interactionId);
    this.answers.delete(interactionId);
    const prompt = this.pending.get(interactionId);
    if (!prompt) return;
    this.removePending(prompt);
    const response = status === 'answered' ? await mine : undefined;
    const record = response ? answeredFacts(interactionId, response) : await this.options.store.getInteraction(interactionId);
    const outcome = record ? this.outcomeText(record) : `closed (${status})`;
    this.remember({ ...prompt, outcome });
    if (prompt.ref && prompt.text !== undefined) await this.bus.editOutbound(prompt.target.channel, prompt.ref, { text: `${prompt.text}\n\n${outcome}` });
    // Without a ref (sent before a restart, or the send failed) the chat learns it from a new message;
    // an expiry is always posted too, so a phone that shows an old prompt sees it is gone.
    if (!prompt.ref || status === 'expired') await this.say(prompt.target, `[${prompt.matchId.slice(0, SHORT_ID_LENGTH)}] ${outcome}`);
  }

  private promptOf(record: InteractionRecord, target: ChatTarget): Prompt {
    const kind = record.request.kind === 'confirm' ? 'approval' : record.request.kind === 'input' ? 'input' : 'question';
    return { interactionId: record.id, runId: record.runId, matchId: shortIdOf(record.id), target, kind };
  }

  private async prompt(record: InteractionRecord, target: ChatTarget): Promise<void> {
    const adapter = this.adapters.get(target.channel);
    const config = this.configs.get(target.channel);
    if (!adapter || !config) return;
    const prompt = this.promptOf(record, target);
    this.addPending(prompt);
    if (record.request.kind === 'confirm' && config.approvers.length === 0) {
      // askFallback: deny. Nobody here may approve, so the run is told at once instead of waiting.
      await this.answer(record.id, { kind: 'confirm', confirmed: false, message: `No approver is configured for ${target.channel} (askFallback: deny).`, userId: 'askFallback' }, target.channel).catch(() => {});
      return;
    }
    const rendered = renderInteraction(record, adapter.limits, await askContextFor(this.options.store, record));
    if (!rendered) {
      await this.say(target, `A ${record.request.kind} request waits; answer it in the web page (${record.id}).`);
      return;
    }
    prompt.text = fitPrompt(rendered.text, adapter.limits.maxText);
    const ref = await this.bus.publishOutbound(target.channel, { chatId: target.chatId, ...(target.threadId ? { threadId: target.threadId } : {}), text: prompt.text, approval: rendered.approval });
    if (ref) prompt.ref = ref;
  }

  private outcomeText(record: OutcomeFacts): string {
    const response = record.response as (Record<string, unknown> & { confirmed?: boolean; remember?: string; message?: string; channel?: string }) | null;
    const channel = response?.channel ?? this.answeredVia.get(record.id);
    const name = record.answeredBy && channel ? (this.names.get(`${channel}\u0000${record.answeredBy}`) ?? senderOfPrincipal(record.answeredBy, channel)) : undefined;
    const who = `${name ?? record.answeredBy ?? 'someone'}${via(channel)} at ${hhmm(record.answeredAt)}`;
    if (record.status === 'answered') {
      if (record.kind === 'confirm') {
        if (response?.confirmed) return `✅ Approved${response.remember && response.remember !== 'once' ? ' (always)' : ''} by ${who}`;
        return `❌ Denied by ${who}${response?.message ? `: ${response.message}` : ''}`;
      }
      return `✅ Answered by ${who}`;
    }
    if (record.status === 'expired') return `⌛ Expired at ${hhmm(record.closedAt)}: nobody answered in time (the agent was told it timed out, not that it was denied).`;
    return `⏹ Cancelled: ${record.reason ?? 'the run stopped'}`;
  }

  private remember(closed: Closed): void {
    const known = this.closed.get(closed.interactionId);
    if (known) dropFrom(this.closedByShort, known.matchId.slice(0, SHORT_ID_LENGTH), known);
    this.closed.set(closed.interactionId, closed);
    pushTo(this.closedByShort, closed.matchId.slice(0, SHORT_ID_LENGTH), closed);
    if (this.closed.size > MAX_CLOSED) {
      const oldest = this.closed.values().next().value!;
      this.closed.delete(oldest.interactionId);
      dropFrom(this.closedByShort, oldest.matchId.slice(0, SHORT_ID_LENGTH), oldest);
    }
  }

  /** Posts `text`; longer than the platform takes, it goes out in parts (in order) rather than cut. */
  private async say(target: ChatTarget, text: string): Promise<MessageRef | undefined> {
    let ref: MessageRef | undefined;
    for (const part of splitText(text, this.adapters.get(target.channel)?.limits.maxText)) {
      ref = await this.bus.publishOutbound(target.channel, { chatId: target.chatId, ...(target.threadId ? { threadId: target.threadId } : {}), text: part });
    }
    return ref;
  }

  // ── inbound: the approval check before anything is queued ─────────────────────────────────

  private targetOfMessage(m: InboundMessage): ChatTarget {
    return { channel: m.channel, chatId: m.chatId, ...(m.threadId ? { threadId: m.threadId } : {}) };
  }

  private async reply(m: InboundMessage, handled: InboundResult['handled'], notice: string): Promise<InboundResult> {
    // A tap gets a toast from the adapter; a typed message gets a reply in the chat.
    if (!m.fromButton) await this.say(this.targetOfMessage(m), notice);
    return { handled, notice };
  }

  /** Who the sender of `m` is in runs and answers: the server user they are mapped to, else `<channel>:<senderId>`. */
  private identityOf(m: Pick<InboundMessage, 'channel' | 'senderId'>): string {
    return chatIdentity(m.channel, m.senderId, this.configs.get(m.channel)?.users);
  }

  private async inboundCheck(m: InboundMessage): Promise<InboundResult | undefined> {
    const config = this.configs.get(m.channel);
    if (!config) return { handled: 'ignored' };
    const approver = config.approvers.includes(m.senderId);
    const allowed = approver || (config.allowFrom ?? config.approvers).includes(m.senderId);
    // Someone this channel does not serve hears nothing, not even a refusal: a reply would tell them
    // the bot is there, that something waits, and whom to impersonate.
    if (!allowed) return { handled: 'ignored' };
    if (m.senderName) {
      this.names.set(`${m.channel}\u0000${this.identityOf(m)}`, m.senderName);
      if (this.names.size > MAX_CLOSED) this.names.delete(this.names.keys().next().value!);
    }
    const command = parseChatCommand(m.text);
    const here = this.targetOfMessage(m);
    switch (command.type) {
      case 'approve':
      case 'answer': {
        let found = this.find(command.id, here);
        // Closed before a restart (this hub never saw it close): the store still knows how it ended.
        if (found.type === 'none') found = await this.findClosedInStore(command.id, here);
        if (found.type === 'ambiguous') return this.reply(m, 'notice', `Several asks start with "${command.id}": ${found.ids.join(', ')}. Type more of the id.`);
        if (found.type === 'closed') {
          if (m.fromButton && m.messageRef && found.prompt.text !== undefined) await this.bus.editOutbound(m.channel, m.messageRef, { text: `${found.prompt.text}\n\n${found.prompt.outcome}` });
          return this.reply(m, 'notice', this.alreadyText(found.prompt));
        }
        if (found.type === 'none') return this.reply(m, 'notice', `No ask "${command.id}" waits (unknown id, or it is no longer open). /status lists what waits here.`);
        const prompt = found.prompt;
        if (!approver) return this.reply(m, 'notice', `Only an approver can answer "${prompt.matchId.slice(0, SHORT_ID_LENGTH)}"; you (${m.senderId}) are not one.`);
        if (m.messageRef && !prompt.ref) prompt.ref = m.messageRef;
        if (command.type === 'approve') return this.answerApproval(m, prompt, command.decision, command.reason);
        return this.answerQuestion(m, prompt, command.value);
      }
      case 'yes':
      case 'no': {
        const approvals = this.waitingIn(here).filter((p) => p.kind === 'approval');
        // No approval waits: a bare yes is text like any other (an answer to a question waiting here).
        if (approvals.length === 0) return this.typedAnswer(m, here, approver, m.text.trim());
        if (!approver) return this.reply(m, 'notice', `Only an approver can answer the approval waiting here; you (${m.senderId}) are not one.`);
        if (approvals.length > 1) return this.reply(m, 'notice', `${approvals.length} approvals wait here; answer one by id:\n${this.listText(approvals)}`);
        return this.answerApproval(m, approvals[0]!, command.type === 'yes' ? 'once' : 'deny');
      }
      case 'bad':
        return this.reply(m, 'notice', command.message);
      case 'stop':
      case 'status':
      case 'new':
        return this.inSession(here, () => this.sessionCommand(m, command.type));
      case 'text':
        return this.typedAnswer(m, here, approver, command.text);
    }
  }

  /**
   * Text typed while a question waits in this chat is its answer (an option's label, or "Other"),
   * so only an approver's is taken; another sender's is refused rather than handed to the agent,
   * which would read it as the answer it asked for. With no question waiting it is the agent's.
   */
  private async typedAnswer(m: InboundMessage, here: ChatTarget, approver: boolean, text: string): Promise<InboundResult | undefined> {
    const question = this.waitingIn(here).find((p) => p.kind !== 'approval');
    if (!question) return undefined;
    if (!approver) return this.reply(m, 'notice', `Only an approver can answer the question waiting here ("${question.matchId.slice(0, SHORT_ID_LENGTH)}"); you (${m.senderId}) are not one.`);
    return this.answerQuestion(m, question, text, true);
  }

  private find(id: string, here: ChatTarget): { type: 'open'; prompt: Prompt } | { type: 'closed'; prompt: Closed } | { type: 'ambiguous'; ids: string[] } | { type: 'none' } {
    const needle = id.toLowerCase();
    // Only this channel's asks: another channel (another Slack workspace, another bot) has its own
    // approvers and people, who must neither answer nor learn of asks they were not shown.
    const matches = (p: Prompt) => p.target.channel === here.channel && (p.matchId.startsWith(needle) || p.interactionId === id);
    const open: Prompt[] = [];
    // A button or a typed id of SHORT_ID_LENGTH or more: its few candidates by the short id (and
    // the full interaction id); a shorter prefix, typed, goes over every open ask.
    if (needle.length >= SHORT_ID_LENGTH) {
      for (const p of this.openByShort.get(needle.slice(0, SHORT_ID_LENGTH)) ?? []) if (matches(p)) open.push(p);
      const byId = this.pending.get(id);
      if (byId && !open.includes(byId) && matches(byId)) open.push(byId);
    } else {
      for (const p of this.pending.values()) if (matches(p)) open.push(p);
    }
    // This chat's asks first: the same prefix may be open in another chat too.
    const local = open.filter((p) => sameChat(p.target, here));
    const pick = local.length > 0 ? local : open;
    if (pick.length === 1) return { type: 'open', prompt: pick[0]! };
    if (pick.length > 1) return { type: 'ambiguous', ids: pick.map((p) => p.matchId.slice(0, Math.max(SHORT_ID_LENGTH, needle.length + 1))) };
    // The most recently closed match.
    let last: Closed | undefined;
    if (needle.length >= SHORT_ID_LENGTH) {
      for (const p of this.closedByShort.get(needle.slice(0, SHORT_ID_LENGTH)) ?? []) if (matches(p)) last = p;
      const byId = this.closed.get(id);
      if (!last && byId && matches(byId)) last = byId;
    } else {
      for (const p of this.closed.values()) if (matches(p)) last = p;
    }
    return last ? { type: 'closed', prompt: last } : { type: 'none' };
  }

  /** A closed ask of this chat's recent runs whose short id starts with `id`, read from the store. */
  private async findClosedInStore(id: string, here: ChatTarget): Promise<{ type: 'closed'; prompt: Closed } | { type: 'none' }> {
    const needle = id.toLowerCase();
    if (needle.length < 3) return { type: 'none' };
    const { store } = this.options;
    const adapter = this.adapters.get(here.channel);
    for (const run of await store.listRuns({ sessionId: sessionKey(here), limit: 5 })) {
      for (const record of await store.listInteractions({ runId: run.id, status: ['answered', 'expired', 'cancelled'] })) {
        if (isNextMessageRequest(record.request) || !shortIdOf(record.id).startsWith(needle)) continue;
        const context = await askContextFor(store, record);
      const rendered = adapter ? renderInteraction(record, adapter.limits, context) : undefined;
        const closed: Closed = { ...this.promptOf(record, here), outcome: this.outcomeText(record), ...(rendered ? { text: fitPrompt(rendered.text, adapter!.limits.maxText) } : {}) };
        this.remember(closed);
        return { type: 'closed', prompt: closed };
      }
    }
    return { type: 'none' };
  }

  private alreadyText(prompt: Closed): string {
    const outcome = prompt.outcome.replace(/^\S+\s/u, '');
    return `"${prompt.matchId.slice(0, SHORT_ID_LENGTH)}" is no longer open: ${outcome.charAt(0).toLowerCase()}${outcome.slice(1)}`;
  }

  private listText(prompts: Prompt[]): string {
    return prompts.map((p) => `• ${p.matchId.slice(0, SHORT_ID_LENGTH)} ${(p.text ?? '').split('\n')[1] ?? p.kind}`).join('\n');
  }

  private async answer(interactionId: string, body: Record<string, unknown>, channel: string): Promise<void> {
    this.answeredVia.set(interactionId, channel);
    if (this.answeredVia.size > MAX_CLOSED) this.answeredVia.delete(this.answeredVia.keys().next().value!);
    const answered = this.options.runner.respond(interactionId, { ...body, ...(ANSWER_HAS_CHANNEL ? { channel } : {}) });
    this.answers.set(
      interactionId,
      answered.then(
        (r) => r.response,
        () => undefined,
      ),
    );
    // Bounded like answeredVia: an answer whose notification never came here (a next-message ask,
    // a prompt this hub does not show) is forgotten with the oldest.
    if (this.answers.size > MAX_CLOSED) this.answers.delete(this.answers.keys().next().value!);
    try {
      await answered;
    } catch (error) {
      // Not ours (answered elsewhere first, expired): the outcome must not name this channel.
      this.answeredVia.delete(interactionId);
      throw error;
    }
  }

  private async answerApproval(m: InboundMessage, prompt: Prompt, decision: 'once' | 'always' | 'deny', reason?: string): Promise<InboundResult> {
    if (prompt.kind !== 'approval') return this.reply(m, 'notice', `"${prompt.matchId.slice(0, SHORT_ID_LENGTH)}" is a question: answer it with /answer ${prompt.matchId.slice(0, SHORT_ID_LENGTH)} <option>.`);
    const body = {
      kind: 'confirm',
      confirmed: decision !== 'deny',
      // "Always" covers this chat's conversation: the run's session rules, and the approval memory's window.
      ...(decision === 'always' ? { remember: 'session' } : {}),
      ...(reason ? { message: reason } : {}),
      userId: this.identityOf(m),
    };
    return this.deliverAnswer(m, prompt, body, decision === 'deny' ? 'Denied.' : 'Approved.');
  }

  private async answerQuestion(m: InboundMessage, prompt: Prompt, value: string, typed = false): Promise<InboundResult> {
    const record = await this.options.store.getInteraction(prompt.interactionId);
    if (!record) return this.reply(m, 'notice', 'That ask no longer exists.');
    const request = record.request;
    const n = /^\d+$/.test(value) && !typed ? Number(value) : undefined;
    let body: Record<string, unknown>;
    if (request.kind === 'questions') {
      const answers: Record<string, string> = {};
      for (const q of request.questions) answers[q.question] = n !== undefined && q.options[n - 1] ? q.options[n - 1]!.label : value;
      body = { kind: 'questions', answers };
    } else if (request.kind === 'select') {
      const option = n !== undefined ? request.options[n - 1] : request.options.find((o) => o.label === value || o.value === value);
      if (!option) return this.reply(m, 'notice', `"${value}" is not one of the options (1-${request.options.length}).`);
      body = { kind: 'select', selected: [option.value] };
    } else if (request.kind === 'input') {
      body = { kind: 'input', text: value };
    } else {
      return this.reply(m, 'notice', `"${prompt.matchId.slice(0, SHORT_ID_LENGTH)}" is an approval: answer with /approve ${prompt.matchId.slice(0, SHORT_ID_LENGTH)} once|always|deny.`);
    }
    return this.deliverAnswer(m, prompt, { ...body, userId: this.identityOf(m) }, 'Answered.');
  }

  private async deliverAnswer(m: InboundMessage, prompt: Prompt, body: Record<string, unknown>, done: string): Promise<InboundResult> {
    try {
      await this.answer(prompt.interactionId, body, m.channel);
      return { handled: 'approval', notice: done };
    } catch (error) {
      if (InteractionAlreadyAnsweredError.isInstance(error) || InteractionExpiredError.isInstance(error) || InteractionCancelledError.isInstance(error) || InteractionNotFoundError.isInstance(error)) {
        const record = await this.options.store.getInteraction(prompt.interactionId);
        const outcome = record ? this.outcomeText(record) : 'it no longer exists';
        return this.reply(m, 'notice', this.alreadyText({ ...prompt, outcome }));
      }
      if (InvalidResponseError.isInstance(error)) return this.reply(m, 'notice', error.message);
      throw error;
    }
  }

  // ── sessions: a chat's conversation with its run ──────────────────────────────────────────

  /** One thing at a time per chat, in arrival order. */
  private inSession<T>(target: ChatTarget, step: (session: Session) => Promise<T>): Promise<T> {
    const key = sessionKey(target);
    let session = this.sessions.get(key);
    if (!session) {
      session = { target, chain: Promise.resolve() };
      this.sessions.set(key, session);
    }
    const s = session;
    const next = s.chain.then(() => step(s));
    s.chain = next.catch(() => {});
    return next;
  }

  /** The chat's current run, if it has one that is not finished. */
  private async currentRun(target: ChatTarget, session: Session): Promise<RunRecord | undefined> {
    const { store } = this.options;
    const run = session.runId ? await store.getRun(session.runId) : (await store.listRuns({ sessionId: sessionKey(target), limit: 1 }))[0];
    if (!run || FINISHED_STATUSES.includes(run.status)) {
      session.runId = undefined;
      return undefined;
    }
    session.runId = run.id;
    return run;
  }

  private async nextMessageAsk(runId: string): Promise<InteractionRecord | undefined> {
    const pending = await this.options.store.listInteractions({ runId, status: ['pending'] });
    return pending.find((r) => isNextMessageRequest(r.request));
  }

  private toAgent(m: InboundMessage): Promise<InboundResult> {
    const target = this.targetOfMessage(m);
    return this.inSession(target, async (session) => {
      const run = await this.currentRun(target, session);
      if (!run) {
        await this.startRun(target, session, m);
        return { handled: 'agent' };
      }
      const ask = await this.nextMessageAsk(run.id);
      if (ask) await this.deliverQueued(target, session, ask, m);
      else await this.enqueue(target, m);
      return { handled: 'agent' };
    });
  }

  /**
   * The run works: the message waits in the store for its next-message ask. Committed before the
   * chat is told, so "Queued" is a promise a restart or a crash keeps. (If the ask appeared
   * meanwhile, its notification's turn in this session comes after this one and finds the message.)
   */
  private async enqueue(target: ChatTarget, m: InboundMessage): Promise<void> {
    const key = sessionKey(target);
    this.maybeQueued.add(key);
    await this.options.store.queueChatMessage(key, storedMessage(m));
    const waiting = await this.options.store.listChatQueue({ sessionKey: key });
    if (waiting.length === 1) await this.say(target, 'Queued: the agent reads this when it finishes what it is doing.');
  }

  /**
   * The run asks for its next message: everything queued (and `extra`, the message being handled)
   * goes to it as one message.
   *
   * The answer that delivers them is committed by the durable runner in its own transaction (the
   * live loop's fenced claim, or the claim that resumes a released run), so the queue cannot be
   * emptied in that same transaction without reaching into the runner. Instead the queued messages
   * are reserved for this ask (`ask:<id>`, one transaction) right before the answer and removed right
   * after it. A crash in between leaves them reserved, and the next start reads the ask: answered
   * with their text → they reached the run (removed, never sent twice); otherwise → back in the
   * queue (never lost), handed to the ask again if it still waits.
   */
  private async deliverQueued(target: ChatTarget, session: Session, ask: InteractionRecord, extra?: InboundMessage): Promise<void> {
    const key = sessionKey(target);
    const token = `ask:${ask.id}`;
    const reserved = await this.reserveQueued(key, token);
    const messages = [...reserved.map(queuedMessage), ...(extra ? [extra] : [])];
    if (messages.length === 0) return;
    const text = joinTexts(messages);
    try {
      await this.answer(ask.id, { kind: 'input', text, userId: this.identityOf(messages[0]!) }, target.channel);
    } catch (error) {
      // The answer may have been committed before something after it failed: the ask's record says.
      if (await this.answeredWith(ask.id, text)) {
        if (reserved.length) await this.settleQueued(key, token, 'delivered');
        this.options.log.warn({ err: error, chatId: target.chatId }, 'next message delivered, then the run could not be woken here');
        return;
      }
      // Answered or closed meanwhile (the run ended): the messages wait for the next run.
      if (reserved.length) await this.settleQueued(key, token, 'released');
      this.options.log.debug({ err: error, chatId: target.chatId }, 'next message not delivered');
      const run = await this.currentRun(target, session);
      if (!run) await this.startRun(target, session, extra);
      else if (extra) await this.enqueue(target, extra);
      return;
    }
    if (reserved.length) await this.settleQueued(key, token, 'delivered');
  }

  /**
   * Reserves what the chat has queued for `token`. A read first, and only for a chat that may have
   * something queued: most next-message asks and new runs find nothing, and then nothing is written.
   */
  private async reserveQueued(key: string, token: string): Promise<QueuedChatMessage[]> {
    const { store } = this.options;
    if (!this.maybeQueued.has(key)) return [];
    if ((await store.listChatQueue({ sessionKey: key })).length === 0) {
      this.maybeQueued.delete(key);
      return [];
    }
    // Reserved is still queued until settled: the key stays until 'delivered'.
    return store.reserveChatQueue(key, token);
  }

  private async settleQueued(key: string, token: string, outcome: 'delivered' | 'released'): Promise<void> {
    await this.options.store.settleChatQueue(token, outcome);
    // Delivered: the reservation took all the chat had (one thing at a time per chat, so nothing
    // was queued meanwhile). Released: back in the queue.
    if (outcome === 'delivered') this.maybeQueued.delete(key);
  }

  /** At start: a chat's queued messages go to its run if that run waits for its next message. */
  private async deliverWaiting(target: ChatTarget, session: Session): Promise<void> {
    const run = await this.currentRun(target, session);
    if (!run) return;
    const ask = await this.nextMessageAsk(run.id);
    if (ask) await this.deliverQueued(target, session, ask);
  }

  private async answeredWith(askId: string, text: string, prefix = false): Promise<boolean> {
    const record = await this.options.store.getInteraction(askId);
    if (record?.status !== 'answered') return false;
    const answered = (record.response as { text?: unknown } | null)?.text;
    if (typeof answered !== 'string') return false;
    // With `prefix`: the answer may have carried the message being handled after the queued ones.
    return answered === text || (prefix && answered.startsWith(`${text}\n\n`));
  }

  /**
   * Handovers a crash interrupted (messages still reserved): removed if they reached the run, back
   * in the queue otherwise. Returns the chats that still have messages queued.
   */
  private async recoverQueue(): Promise<ChatTarget[]> {
    const { store, log } = this.options;
    // Only this hub's channels: another server over the same database may run other channels, and
    // its handovers in progress are its own.
    const all = (await store.listChatQueue()).filter((q) => this.adapters.has(String(q.message['channel'])));
    const byToken = new Map<string, QueuedChatMessage[]>();
    for (const q of all) if (q.reservedFor !== null) byToken.set(q.reservedFor, [...(byToken.get(q.reservedFor) ?? []), q]);
    const delivered = new Set<number>();
    for (const [token, entries] of byToken) {
      const text = joinTexts(entries.map(queuedMessage));
      const [kind, ...rest] = token.split(':');
      const id = rest.join(':');
      const reached = kind === 'run' ? (await store.getRun(id)) !== undefined : kind === 'ask' ? await this.answeredWith(id, text, true) : false;
      await store.settleChatQueue(token, reached ? 'delivered' : 'released');
      if (reached) for (const q of entries) delivered.add(q.seq);
      log.info({ token, messages: entries.length, reached }, 'chat queue: interrupted handover settled');
    }
    const targets = new Map<string, ChatTarget>();
    for (const q of all) {
      if (delivered.has(q.seq) || targets.has(q.sessionKey)) continue;
      this.maybeQueued.add(q.sessionKey);
      targets.set(q.sessionKey, this.targetOfMessage(queuedMessage(q)));
    }
    return [...targets.values()];
  }

  /**
   * A new run for the chat: its task is what waits in the queue (messages of a run that ended
   * before reading them) followed by `m`. Handed over like deliverQueued: reserved for the new run's
   * id before it starts, removed once it exists.
   */
  private async startRun(target: ChatTarget, session: Session, m?: InboundMessage): Promise<void> {
    const config = this.configs.get(target.channel)!;
    const { runner, admitRun, store } = this.options;
    const key = sessionKey(target);
    const runId = `run_${randomUUID()}`;
    const token = `run:${runId}`;
    const reserved = await this.reserveQueued(key, token);
    const messages = [...reserved.map(queuedMessage), ...(m ? [m] : [])];
    if (messages.length === 0) return;
    const text = joinTexts(messages);
    // The run is its sender's: their principal (`telegram:42`) or the server user they are mapped to.
    const by = this.identityOf(m ?? messages[0]!);
    try {
      await this.options.assertRunCapacity?.(by);
      const cwd = this.options.cwd(config.cwd);
      // An external agent for this channel's runs (its calls still pass the chat run's gate).
      const agentParts = config.agent ? this.options.agentRun?.(config.agent, cwd) : undefined;
      if (config.agent && !agentParts) throw new Error(`the agent ${config.agent} is not available on this server`);
      const spec = await admitRun({
        task: text,
        surface: 'chat',
        model: agentParts?.agent ? `agent:${agentParts.agent.name}` : this.options.model(),
        ...(agentParts?.agent ? { agent: agentParts.agent } : {}),
        ...(agentParts?.chain ? { chain: agentParts.chain } : {}),
        cwd,
        principal: by,
        chat: target,
        interactionTimeoutMs: this.options.interactionTimeoutMs ?? config.approvalTimeoutSeconds * 1000,
        server: this.options.serverGrant(),
      });
      const handle = await runner.start(text, { ...spec, runId, userId: by, sessionId: key, channel: target.channel });
      session.runId = handle.runId;
      this.targets.set(handle.runId, target);
      this.cursors.set(handle.runId, 0);
      handle.outcome.catch(() => {});
      if (reserved.length) await this.settleQueued(key, token, 'delivered');
    } catch (error) {
      // Stored before the failure: the run has them as its task.
      if (reserved.length) await this.settleQueued(key, token, (await store.getRun(runId)) ? 'delivered' : 'released');
      this.options.log.warn({ err: error, channel: target.channel, chatId: target.chatId }, 'chat run did not start');
      await this.say(target, `Could not start a run: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async sessionCommand(m: InboundMessage, command: 'stop' | 'status' | 'new'): Promise<InboundResult> {
    const target = this.targetOfMessage(m);
    const session = this.sessions.get(sessionKey(target))!;
    const run = await this.currentRun(target, session);
    if (command === 'status') {
      const waiting = this.waitingIn(target);
      const queued = (await this.options.store.listChatQueue({ sessionKey: sessionKey(target) })).length;
      const lines = [
        run
          ? `Run ${run.id}: ${run.status}${queued ? `, ${queued} message(s) queued` : ''}.`
          : `No run in this chat.${queued ? ` ${queued} queued message(s) go to the run your next message starts.` : ''}`,
      ];
      lines.push(waiting.length ? `Waiting for an answer:\n${this.listText(waiting)}` : 'Nothing waits for an answer here.');
      return this.reply(m, 'notice', lines.join('\n'));
    }
    await this.options.store.dropChatQueue(sessionKey(target));
    this.maybeQueued.delete(sessionKey(target));
    if (!run) return this.reply(m, 'notice', command === 'new' ? 'Starting over: your next message starts a new run.' : 'No run to stop in this chat.');
    const ask = await this.nextMessageAsk(run.id);
    if (command === 'new' && ask) {
      // Idle: close it as done (its next-message ask answered with nothing ends it completed).
      await this.answer(ask.id, { kind: 'input', text: '', userId: this.identityOf(m) }, m.channel).catch(() => {});
    } else {
      await this.options.runner.cancel(run.id, `stopped by ${m.senderName ?? m.senderId} in ${m.channel}`).catch(() => {});
    }
    session.runId = undefined;
    return this.reply(m, 'notice', command === 'new' ? 'Starting over: your next message starts a new run.' : 'Stopped; its open asks are closed.');
  }
}
