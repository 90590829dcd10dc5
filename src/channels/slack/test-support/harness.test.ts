import { describe, expect, it } from 'vitest';
import { channelCommonConfigSchema, type InboundMessage } from '../../adapter.js';
import { makeSlackHarness } from './harness.js';
import { sampleApproval } from '../../test-harness.js';

// The harness itself (what the shared contract suite drives): a message and a tap reach the sink,
// the chat shows what was sent and edited, and a restarted adapter still gets the old button's tap.
describe('slack contract harness', () => {
  it('delivers says and taps, shows messages, and survives a restart', async () => {
    const harness = await makeSlackHarness();
    try {
      const seen: InboundMessage[] = [];
      const common = channelCommonConfigSchema.parse({ approvers: ['1001'] });
      const first = harness.makeAdapter(common);
      await first.start(async (m) => {
        seen.push(m);
        return { handled: 'agent' };
      });
      await harness.userSays('C5001', 'hello', { senderId: '1001', senderName: 'alice' });
      expect(seen.map((m) => [m.chatId, m.senderId, m.text])).toEqual([['C5001', '1001', 'hello']]);
      const ref = await first.send(sampleApproval('C5001'));
      expect(harness.lastMessages('C5001').at(-1)).toMatchObject({ messageId: ref.messageId, buttons: [{ label: 'Approve once', command: '/approve ab12 once' }, { label: 'Deny', command: '/approve ab12 deny' }] });
      await first.stop();
      const second = harness.makeAdapter(common);
      await second.start(async (m) => {
        seen.push(m);
        return { handled: 'approval' };
      });
      await harness.userTaps('ab12', 'deny', { senderId: '1001' });
      expect(seen.at(-1)).toMatchObject({ chatId: 'C5001', senderId: '1001', text: '/approve ab12 deny', fromButton: true, messageRef: { messageId: ref.messageId } });
      await second.edit(ref, { text: 'Denied by alice' });
      expect(harness.lastMessages('C5001').some((m) => m.text === 'Denied by alice')).toBe(true);
      await expect(harness.userTaps('zz99', 'once', { senderId: '1001' })).rejects.toThrow(/no message ever carried/);
    } finally {
      await harness.close();
    }
  });
});
