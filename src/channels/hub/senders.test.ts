import { describe, expect, it } from 'vitest';
import { channelCommonConfigSchema } from '../adapter.js';
import { rightsOf, SenderNames } from './senders.js';

describe('rightsOf', () => {
  it('lets approvers answer, allowFrom talk, and nobody else either', () => {
    const config = channelCommonConfigSchema.parse({ approvers: ['alice'], allowFrom: ['mallory'] });
    expect(rightsOf(config, 'alice')).toEqual({ approver: true, allowed: true });
    expect(rightsOf(config, 'mallory')).toEqual({ approver: false, allowed: true });
    expect(rightsOf(config, 'eve')).toEqual({ approver: false, allowed: false });
  });

  it('lets only the approvers talk when allowFrom is not given', () => {
    const config = channelCommonConfigSchema.parse({ approvers: ['alice'] });
    expect(rightsOf(config, 'mallory').allowed).toBe(false);
  });
});

describe('SenderNames', () => {
  it('shows the name a sender wrote with in their channel, else their sender id', () => {
    const names = new SenderNames();
    names.note({ channel: 'slack:A', chatId: 'C1', senderId: 'U1', senderName: 'alice', text: 'hi' }, 'slack:A:U1');
    expect(names.nameOf('slack:A:U1', 'slack:A')).toBe('alice');
    // The same principal string seen through another channel is not that name.
    expect(names.nameOf('slack:B:U1', 'slack:B')).toBe('U1');
  });
});
