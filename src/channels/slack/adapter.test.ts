import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage, InboundResult, RenderedApproval } from '../adapter.js';
import { ChannelConfigError, ChannelSendError, ChannelUnavailableError } from '../errors.js';
import { SlackAdapter } from './adapter.js';
import { slackConfigSchema } from './config.js';
import { FAKE_BOT_USER_ID, FakeSlack } from './test-support/fake-slack.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const tokens = { botToken: 'xoxb-test', appToken: 'xapp-test' };
const env = { SLACK_BOT_TOKEN: tokens.botToken, SLACK_APP_TOKEN: tokens.appToken };

const approval: RenderedApproval = {
  interactionId: 'k3f9aaaa-0000',
  shortId: 'k3f9',
  kind: 'approval',
  toolName: 'Bash',
  title: 'Bash wants to run a command',
  inputView: 'ls *.ts && echo <done>',
  risk: 'medium',
  options: [
    { value: 'once', label: 'Approve once', command: '/approve k3f9 once', style: 'primary' },
    { value: 'always', label: 'Approve for 5 min', command: '/approve k3f9 always' },
    { value: 'deny', label: 'Deny', command: '/approve k3f9 deny', style: 'danger' },
  ],
};

describe('Slack adapter against a fake Web API and Socket Mode server', () => {
  let fake: FakeSlack;
  let adapter: SlackAdapter;
  let received: InboundMessage[];
  let result: InboundResult;
  let delivered: Promise<void>;
  let markDelivered: () => void;
  const sleeps: number[] = [];

  const expectNext = () => {
    delivered = new Promise((resolve) => (markDelivered = resolve));
  };

  beforeEach(async () => {
    fake = await new FakeSlack(tokens).listen();
    sleeps.length = 0;
    adapter = new SlackAdapter(slackConfigSchema.parse({ slackApiUrl: fake.apiUrl }), { env, log: quiet }, { sleep: async (ms) => void sleeps.push(ms) });
    received = [];
    result = { handled: 'agent' };
    expectNext();
    await adapter.start(async (m) => {
      received.push(m);
      markDelivered();
      return result;
    });
  });
  afterEach(async () => {
    await adapter.stop();
    await fake.close();
  });

  it('connects over Socket Mode and says to what', async () => {
    expect(fake.connections).toBe(1);
    const other = new SlackAdapter(slackConfigSchema.parse({ slackApiUrl: fake.apiUrl }), { env, log: quiet });
    const info = await other.start(async () => ({ handled: 'ignored' }));
    expect(info.description).toBe(`slack: @sage in Fake Team via ${fake.apiUrl} (Socket Mode)`);
    await other.stop();
  });

  it('rejects a wrong bot token and a wrong app token at start, naming the env var', async () => {
    const badBot = new SlackAdapter(slackConfigSchema.parse({ slackApiUrl: fake.apiUrl }), { env: { ...env, SLACK_BOT_TOKEN: 'xoxb-wrong' }, log: quiet });
    await expect(badBot.start(async () => ({ handled: 'ignored' }))).rejects.toThrow(ChannelUnavailableError);
    const badApp = new SlackAdapter(slackConfigSchema.parse({ slackApiUrl: fake.apiUrl }), { env: { ...env, SLACK_APP_TOKEN: 'xapp-wrong' }, log: quiet });
    await expect(badApp.start(async () => ({ handled: 'ignored' }))).rejects.toThrow(/SLACK_APP_TOKEN/);
  });

  it('names a missing secret', () => {
    expect(() => new SlackAdapter(slackConfigSchema.parse({}), { env: { SLACK_BOT_TOKEN: 'x' }, log: quiet })).toThrow(ChannelConfigError);
    expect(() => new SlackAdapter(slackConfigSchema.parse({}), { env: { SLACK_BOT_TOKEN: 'x' }, log: quiet })).toThrow(/channels\.slack\.appTokenEnv/);
  });

  it('delivers a message with its thread, without the leading bot mention, and drops bot posts and edits', async () => {
    await fake.userSays('C0001', 'U0001', `<@${FAKE_BOT_USER_ID}> deploy it`, '1700000000.000001');
    await delivered;
    expect(received).toEqual([{ channel: 'slack', chatId: 'C0001', threadId: '1700000000.000001', senderId: 'U0001', text: 'deploy it' }]);
    await fake.deliver('events_api', {
      type: 'event_callback',
      team_id: 'T0001',
      event: { type: 'message', subtype: 'message_changed', channel: 'C0001', ts: '1.1', message: { text: 'x' } },
    });
    expectNext();
    await fake.userSays('D0001', 'U0001', 'yes');
    await delivered;
    expect(received.map((m) => m.text)).toEqual(['deploy it', 'yes']);
  });

  it('posts Block Kit buttons carrying the commands, in plain text so * and < show as typed', async () => {
    const ref = await adapter.send({ chatId: 'C0001', threadId: '1700000000.000001', text: 'Bash: ls *.ts && echo <done>', approval });
    const [sent] = fake.messagesIn('C0001');
    expect(ref).toEqual({ chatId: 'C0001', threadId: '1700000000.000001', messageId: sent!.ts });
    expect(sent!.threadTs).toBe('1700000000.000001');
    expect(sent!.text).toBe('Bash: ls *.ts &amp;&amp; echo &lt;done&gt;');
    expect(sent!.blocks[0]).toEqual({ type: 'section', text: { type: 'plain_text', text: 'Bash: ls *.ts && echo <done>', emoji: false } });
    expect(sent!.firstButtons.map((b) => [b.text, b.value])).toEqual([
      ['Approve once', '/approve k3f9 once'],
      ['Approve for 5 min', '/approve k3f9 always'],
      ['Deny', '/approve k3f9 deny'],
    ]);
    expect(sent!.blocks[1]!.elements.map((e: { style?: string }) => e.style)).toEqual(['primary', undefined, 'danger']);
  });

  it('splits text past 3000 characters into sections', async () => {
    await adapter.send({ chatId: 'C0001', text: 'y'.repeat(7000) });
    expect(fake.messagesIn('C0001')[0]!.blocks.map((b) => b.text.text.length)).toEqual([3000, 3000, 1000]);
  });

  it('acks a tap, delivers it as its command with the message ref, and shows the notice ephemerally', async () => {
    const ref = await adapter.send({ chatId: 'C0001', text: 'Approve?', approval });
    result = { handled: 'notice', notice: 'already approved by bob at 14:02' };
    await fake.userTaps('C0001', ref.messageId, '/approve k3f9 deny', { id: 'U0002', name: 'carol' });
    await delivered;
    expect(received).toEqual([
      { channel: 'slack', chatId: 'C0001', senderId: 'U0002', senderName: 'carol', text: '/approve k3f9 deny', fromButton: true, messageRef: { chatId: 'C0001', messageId: ref.messageId } },
    ]);
    await adapter.stop();
    expect(fake.ephemerals).toEqual([{ channel: 'C0001', user: 'U0002', text: 'already approved by bob at 14:02' }]);
  });

  it('delivers a slash command (Slack never posts a message starting with /) as the typed text; the core answers in the chat', async () => {
    result = { handled: 'notice', notice: 'no approval k3f9 waits here' };
    await fake.userRunsCommand('C0001', 'U0003', '/approve', 'k3f9 once');
    await delivered;
    expect(received).toEqual([{ channel: 'slack', chatId: 'C0001', senderId: 'U0003', senderName: 'u0003', text: '/approve k3f9 once' }]);
    await adapter.stop();
    expect(fake.ephemerals).toEqual([]);
  });

  it('edits the message and removes the buttons unless the approval is given again', async () => {
    const ref = await adapter.send({ chatId: 'C0001', text: 'Approve?', approval });
    await adapter.edit(ref, { text: 'Approved once by alice' });
    const [message] = fake.messagesIn('C0001');
    expect(message).toMatchObject({ text: 'Approved once by alice', edited: true });
    expect(message!.blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it('retries a 429 after its retry-after and a 500, then gives up on a platform error', async () => {
    fake.failNext.push({ status: 429, retryAfter: 3 }, { status: 500 });
    await adapter.send({ chatId: 'C0001', text: 'hi' });
    expect(sleeps).toEqual([3000, 400]);
    fake.failNext.push({ error: 'channel_not_found' });
    await expect(adapter.send({ chatId: 'C0404', text: 'hi' })).rejects.toThrow(ChannelSendError);
  });

  it('stops: the socket closes and no more events arrive', async () => {
    await adapter.stop();
    await adapter.stop();
    // The server side sees the close frame a moment after the client's stop resolves.
    for (let i = 0; i < 100 && fake.connections > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(fake.connections).toBe(0);
    await expect(fake.userSays('C0001', 'U0001', 'hello')).rejects.toThrow(/no Socket Mode connection/);
  });
});
