import type { ChannelCommonConfig, InboundMessage } from '../adapter.js';
import { senderOfPrincipal } from '../identity.js';
import { MAX_CLOSED } from './prompt-index.js';

/** What a channel's config lets a sender do. */
export interface SenderRights {
  /** May answer asks. */
  approver: boolean;
  /** May talk to the agent (and hear anything back). */
  allowed: boolean;
}

export function rightsOf(config: ChannelCommonConfig, senderId: string): SenderRights {
  const approver = config.approvers.includes(senderId);
  return { approver, allowed: approver || (config.allowFrom ?? config.approvers).includes(senderId) };
}

/**
 * Display names of the people who wrote here (`channel`, their identity → name), for "approved by
 * alice". Only senders the channel serves are kept: a stranger's name is never stored.
 */
export class SenderNames {
  private readonly names = new Map<string, string>();

  note(m: InboundMessage, identity: string): void {
    if (!m.senderName) return;
    this.names.set(`${m.channel}\u0000${identity}`, m.senderName);
    if (this.names.size > MAX_CLOSED) this.names.delete(this.names.keys().next().value!);
  }

  /** The name to show for `principal` in `channel`: the one they wrote with, else their sender id. */
  nameOf(principal: string, channel: string): string | undefined {
    return this.names.get(`${channel}\u0000${principal}`) ?? senderOfPrincipal(principal, channel);
  }
}
