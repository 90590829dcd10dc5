import type { ChannelAdapter, ChannelCommonConfig, InboundMessage, InboundResult, MessageRef } from '../adapter.js';
import { MessageBus } from '../bus.js';
import { chatIdentity } from '../identity.js';
import { targetOfMessage, type ChatTarget } from './chat-target.js';
import { splitText } from './chat-text.js';
import type { ChannelHubOptions } from './options.js';

/** What every part of the hub shares: its options, its channels and the way to talk in a chat. */
export class HubContext {
  readonly adapters = new Map<string, ChannelAdapter>();
  readonly configs = new Map<string, ChannelCommonConfig>();
  readonly bus: MessageBus;

  constructor(readonly options: ChannelHubOptions) {
    for (const { adapter, config } of options.channels) {
      this.adapters.set(adapter.name, adapter);
      this.configs.set(adapter.name, config);
    }
    this.bus = new MessageBus(this.adapters, options.log);
  }

  /** Posts `text`; longer than the platform takes, it goes out in parts (in order) rather than cut. */
  async say(target: ChatTarget, text: string): Promise<MessageRef | undefined> {
    let ref: MessageRef | undefined;
    for (const part of splitText(text, this.adapters.get(target.channel)?.limits.maxText)) {
      ref = await this.bus.publishOutbound(target.channel, {
        chatId: target.chatId,
        ...(target.threadId ? { threadId: target.threadId } : {}),
        text: part,
      });
    }
    return ref;
  }

  async reply(m: InboundMessage, handled: InboundResult['handled'], notice: string): Promise<InboundResult> {
    // A tap gets a toast from the adapter; a typed message gets a reply in the chat.
    if (!m.fromButton) await this.say(targetOfMessage(m), notice);
    return { handled, notice };
  }

  /** Who the sender of `m` is in runs and answers: the server user they are mapped to, else `<channel>:<senderId>`. */
  identityOf(m: Pick<InboundMessage, 'channel' | 'senderId'>): string {
    return chatIdentity(m.channel, m.senderId, this.configs.get(m.channel)?.users);
  }
}
