import { describe, expect, it } from 'vitest';
import { channelCommonConfigSchema, type InboundMessage } from '../../adapter.js';
import { parseTelegramHtml } from './fake-bot-api.js';
import { makeTelegramHarness } from './harness.js';
import { sampleApproval } from '../../test-harness.js';

// The harness itself (what the shared contract suite drives): a message and a tap reach the sink,
// the chat shows what was sent and edited, and a restarted adapter still gets the old button's tap.
describe('telegram contract harness', () => {
  it('delivers says and taps, shows messages, and survives a restart', async () => {
    const harness = await makeTelegramHarness();
    try {
      const seen: InboundMessage[] = [];
      const common = channelCommonConfigSchema.parse({ approvers: ['1001'] });
      const first = harness.makeAdapter(common);
      await first.start(async (m) => {
        seen.push(m);
        return { handled: 'agent' };
      });
      await harness.userSays('5001', 'hello', { senderId: '1001', senderName: 'alice' });
      expect(seen.map((m) => [m.chatId, m.senderId, m.senderName, m.text])).toEqual([['5001', '1001', 'alice', 'hello']]);
      const ref = await first.send(sampleApproval('5001'));
      expect(harness.lastMessages('5001').at(-1)).toMatchObject({ messageId: ref.messageId, buttons: [{ label: 'Approve once', command: '/approve ab12 once' }, { label: 'Deny', command: '/approve ab12 deny' }] });
      await first.stop();
      const second = harness.makeAdapter(common);
      await second.start(async (m) => {
        seen.push(m);
        return { handled: 'approval' };
      });
      await harness.userTaps('ab12', 'deny', { senderId: '1001' });
      expect(seen.at(-1)).toMatchObject({ chatId: '5001', senderId: '1001', text: '/approve ab12 deny', fromButton: true, messageRef: { messageId: ref.messageId } });
      await second.edit(ref, { text: 'Denied by alice' });
      expect(harness.lastMessages('5001').at(-1)).toMatchObject({ text: 'Denied by alice', buttons: [], edited: true });
      await expect(harness.userTaps('zz99', 'once', { senderId: '1001' })).rejects.toThrow(/no message ever carried/);
    } finally {
      await harness.close();
    }
  });

  it('parses HTML as Telegram does, so an unescaped < in a test fails as it would on Telegram', () => {
    expect(parseTelegramHtml('a &lt;b&gt; &amp; <pre>x &amp;&amp; y</pre> &#128512; & done')).toEqual({ text: 'a <b> & x && y 😀 & done', entities: [{ type: 'pre', offset: 8, length: 6 }] });
    expect(() => parseTelegramHtml('echo <done>')).toThrow(/can't parse entities: Unsupported start tag "done"/);
    expect(() => parseTelegramHtml('1 < 2')).toThrow(/can't parse entities/);
    expect(() => parseTelegramHtml('<b>open')).toThrow(/Can't find end tag/);
  });
});
