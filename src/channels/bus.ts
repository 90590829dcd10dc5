import type { ChannelAdapter, ChannelLogger, InboundMessage, InboundResult, MessageEdit, MessageRef, OutboundMessage } from './adapter.js';

export type InboundHandler = (message: InboundMessage) => Promise<InboundResult>;
/** Returns a result when the message was an answer (or a command) and must not reach the agent. */
export type InboundCheck = (message: InboundMessage) => Promise<InboundResult | undefined>;

/**
 * The channels' message bus. `publishInbound` runs the inbound approval check first and queues
 * for the agent only what the check left alone, so a run blocked on an approval never misses its
 * answer and a "yes" never reaches the agent as text. `publishOutbound` sends through the named
 * adapter. Neither ever throws: a failure is logged and reported as a result.
 */
export class MessageBus {
  private check: InboundCheck | undefined;
  private consumer: InboundHandler | undefined;

  constructor(
    private readonly adapters: ReadonlyMap<string, ChannelAdapter>,
    private readonly log: ChannelLogger,
  ) {}

  setInboundApprovalCheck(check: InboundCheck): void {
    this.check = check;
  }

  consumeInbound(handler: InboundHandler): void {
    this.consumer = handler;
  }

  async publishInbound(message: InboundMessage): Promise<InboundResult> {
    try {
      const checked = await this.check?.(message);
      if (checked) return checked;
      if (!this.consumer) return { handled: 'ignored', notice: 'No agent is listening on this channel.' };
      return await this.consumer(message);
    } catch (error) {
      this.log.error({ err: error, channel: message.channel, chatId: message.chatId }, 'channel message failed');
      return { handled: 'notice', notice: 'Sage could not handle that message; see the server log.' };
    }
  }

  /** Sends, or logs why not and returns undefined (the ask stays answerable on the web page). */
  async publishOutbound(channel: string, message: OutboundMessage): Promise<MessageRef | undefined> {
    const adapter = this.adapters.get(channel);
    if (!adapter) return undefined;
    try {
      return await adapter.send(message);
    } catch (error) {
      this.log.warn({ err: error, channel, chatId: message.chatId }, 'channel send failed');
      return undefined;
    }
  }

  async editOutbound(channel: string, ref: MessageRef, edit: MessageEdit): Promise<boolean> {
    const adapter = this.adapters.get(channel);
    if (!adapter) return false;
    try {
      await adapter.edit(ref, edit);
      return true;
    } catch (error) {
      this.log.warn({ err: error, channel, chatId: ref.chatId }, 'channel edit failed');
      return false;
    }
  }
}
