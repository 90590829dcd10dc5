import { isNextMessageRequest, type Unsubscribe } from '../store/index.js';
import type { MessageBus } from './bus.js';
import { Answering } from './hub/answering.js';
import { Answers } from './hub/answers.js';
import type { ChatTarget } from './hub/chat-target.js';
import { ChatQueue } from './hub/chat-queue.js';
import { HubContext } from './hub/context.js';
import { Conversation } from './hub/conversation.js';
import { InboundCheck } from './hub/inbound-check.js';
import type { ChannelHubOptions } from './hub/options.js';
import { PromptIndex, type Prompt } from './hub/prompt-index.js';
import { Prompts } from './hub/prompts.js';
import { RunStart } from './hub/run-start.js';
import { RunUpdates } from './hub/run-updates.js';
import { SenderNames } from './hub/senders.js';
import { SessionCommands } from './hub/session-commands.js';
import { Sessions } from './hub/sessions.js';

export type { ChatTarget } from './hub/chat-target.js';
export { splitText } from './hub/chat-text.js';
export type { ChannelHubOptions, HubChannel } from './hub/options.js';

/**
 * The channel core: sessions per chat, runs started and continued from chat messages, asks shown
 * in the chat they belong to and answered from any chat (or the web page, `sage respond`): the
 * store's exactly-once claim decides and every prompt is edited to say who answered, where and when.
 * Everything it shows is derived from store notifications, so answers given elsewhere update it too.
 * It wires the parts in ./hub (one job each, see the README) and starts and stops them.
 */
export class ChannelHub {
  readonly bus: MessageBus;
  private readonly ctx: HubContext;
  private readonly prompts: Prompts;
  private readonly queue: ChatQueue;
  private readonly updates: RunUpdates;
  private readonly conversation: Conversation;
  private unsubscribe: Unsubscribe | undefined;

  constructor(options: ChannelHubOptions) {
    const ctx = new HubContext(options);
    const names = new SenderNames();
    const answers = new Answers(ctx, names);
    const sessions = new Sessions(ctx);
    this.ctx = ctx;
    this.bus = ctx.bus;
    this.prompts = new Prompts(ctx, new PromptIndex(), answers);
    this.queue = new ChatQueue(ctx);
    this.updates = new RunUpdates(ctx, (target, id, status, next) => this.onInteraction(target, id, status, next));
    const runStart = new RunStart(ctx, this.queue, this.updates);
    this.conversation = new Conversation(ctx, sessions, this.queue, runStart, answers);
    const commands = new SessionCommands(ctx, sessions, this.queue, this.prompts.index, answers);
    const inbound = new InboundCheck(ctx, names, this.prompts, new Answering(ctx, answers), commands);
    this.bus.setInboundApprovalCheck((m) => inbound.check(m));
    this.bus.consumeInbound((m) => this.conversation.toAgent(m));
  }

  /** Indexes what waits in the store, subscribes to its notifications, then starts the adapters. */
  async start(): Promise<string[]> {
    const { store, log } = this.ctx.options;
    const queued = await this.queue.recover();
    this.unsubscribe = await store.subscribe('*', (n) => this.updates.onNotification(n));
    const running = await store.listRuns({ status: ['running', 'idle', 'suspended'], limit: 10_000 });
    for (const run of running) await this.updates.index(run);
    for (const record of await store.listInteractions({ status: ['pending'], limit: 10_000 })) {
      const target = await this.updates.targetFor(record.runId);
      if (!target || isNextMessageRequest(record.request)) continue;
      await this.prompts.restore(record, target);
    }
    const lines: string[] = [];
    for (const adapter of this.ctx.adapters.values()) {
      const info = await adapter.start((m) => this.bus.publishInbound(m));
      log.info({ channel: adapter.name }, `channel ${adapter.name}: ${info.description}`);
      lines.push(`${adapter.name}: ${info.description}`);
    }
    // Messages queued before the restart whose run now waits for its next message: hand them over.
    // One chat's failure is logged and the others go on: the messages stay queued for the run's next ask.
    for (const target of queued) {
      await this.conversation.deliverWaiting(target).catch((error: unknown) =>
        log.error(
          { err: error, channel: target.channel, chatId: target.chatId },
          'queued messages not handed over at start',
        ),
      );
    }
    return lines;
  }

  async stop(): Promise<void> {
    this.updates.halt();
    await this.unsubscribe?.();
    // Queued messages are in the store (committed before the chat was told "Queued"): nothing to say
    // here; the next start hands them to their run.
    for (const adapter of this.ctx.adapters.values()) await adapter.stop();
    await this.updates.drain();
  }

  /** Asks waiting in a chat (for `/status` and tests). */
  waitingIn(target: ChatTarget): Prompt[] {
    return this.prompts.index.waitingIn(target);
  }

  /** An ask of a chat run opened or closed: a next-message ask is the conversation's, any other a prompt. */
  private async onInteraction(
    target: ChatTarget,
    interactionId: string,
    status: string,
    nextMessage?: boolean,
  ): Promise<void> {
    if (status !== 'pending') return this.prompts.close(interactionId, status);
    if (this.prompts.index.has(interactionId)) return;
    if (nextMessage) return this.conversation.onNextMessageAsk(target, interactionId);
    const record = await this.ctx.options.store.getInteraction(interactionId);
    if (!record || record.status !== 'pending') return;
    if (isNextMessageRequest(record.request)) return this.conversation.onNextMessageAsk(target, interactionId, record);
    await this.prompts.show(record, target);
  }
}
