import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage, InboundResult, RenderedApproval } from '../adapter.js';
import { ChannelSendError, ChannelUnavailableError } from '../errors.js';
import { FeishuAdapter } from './adapter.js';
import { feishuConfigSchema } from './config.js';
import { decryptFeishu } from './crypto.js';
import { encryptFeishu, FakeFeishu } from './test-support/fake-feishu.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const creds = { appId: 'cli_a1b2c3d4e5f60718', appSecret: 'secret', verificationToken: 'vtoken', encryptKey: 'ekey' };
const env = { FEISHU_APP_ID: creds.appId, FEISHU_APP_SECRET: creds.appSecret, FEISHU_VERIFICATION_TOKEN: creds.verificationToken, FEISHU_ENCRYPT_KEY: creds.encryptKey };
const url = 'http://sage.test/channels/feishu';

const approval: RenderedApproval = {
  interactionId: 'k3f9aaaa-0000',
  shortId: 'k3f9',
  kind: 'approval',
  toolName: 'Write',
  title: 'Write wants to create a file',
  risk: 'high',
  options: [
    { value: 'once', label: '批准一次 Approve once', command: '/approve k3f9 once' },
    { value: 'deny', label: 'Deny', command: '/approve k3f9 deny', style: 'danger' },
  ],
};

describe('Feishu/Lark adapter (webhook mode) against a fake Open API', () => {
  let fake: FakeFeishu;
  let adapter: FeishuAdapter;
  let received: InboundMessage[];
  let result: InboundResult;
  const sleeps: number[] = [];
  const webhookConfig = () =>
    feishuConfigSchema.parse({ domain: fake.domain, mode: 'webhook', verificationTokenEnv: 'FEISHU_VERIFICATION_TOKEN', encryptKeyEnv: 'FEISHU_ENCRYPT_KEY' });
  const post = (request: Request) => adapter.routes[0]!.handle(request);

  beforeEach(async () => {
    fake = await new FakeFeishu(creds).listen();
    sleeps.length = 0;
    adapter = new FeishuAdapter(webhookConfig(), { env, log: quiet }, { sleep: async (ms) => void sleeps.push(ms) });
    received = [];
    result = { handled: 'agent' };
    await adapter.start(async (m) => {
      received.push(m);
      return result;
    });
  });
  afterEach(async () => {
    await adapter.stop();
    await fake.close();
  });

  it('says what it connected to', async () => {
    const other = new FeishuAdapter(webhookConfig(), { env, log: quiet });
    expect((await other.start(async () => ({ handled: 'ignored' }))).description).toBe(`feishu: Sage Bot via ${fake.domain}, events at /channels/feishu`);
  });

  it('refuses a wrong app secret at start, naming the env vars', async () => {
    const bad = new FeishuAdapter(webhookConfig(), { env: { ...env, FEISHU_APP_SECRET: 'wrong' }, log: quiet });
    await expect(bad.start(async () => ({ handled: 'ignored' }))).rejects.toThrow(ChannelUnavailableError);
    await expect(bad.start(async () => ({ handled: 'ignored' }))).rejects.toThrow(/FEISHU_APP_SECRET/);
  });

  it('requires a verification token in webhook mode', () => {
    const parsed = feishuConfigSchema.safeParse({ mode: 'webhook' });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.path).toEqual(['verificationTokenEnv']);
  });

  it('websocket mode: a refused long connection stops the start', async () => {
    const ws = new FeishuAdapter(feishuConfigSchema.parse({ domain: fake.domain }), { env, log: quiet });
    await expect(ws.start(async () => ({ handled: 'ignored' }))).rejects.toThrow(/long connection/);
    await ws.stop();
  });

  it('answers the url_verification challenge (encrypted) only with the right token', async () => {
    const ok = await post(fake.eventRequest(url, { challenge: 'ch-123', token: creds.verificationToken, type: 'url_verification' }));
    expect(await ok.json()).toEqual({ challenge: 'ch-123' });
    const bad = await post(fake.eventRequest(url, { challenge: 'ch-123', token: 'guess', type: 'url_verification' }));
    expect(bad.status).toBe(401);
  });

  it('refuses plaintext, a wrong key, a wrong signature and a wrong token, delivering nothing', async () => {
    const event = fake.messageEvent('oc_1', 'ou_alice', 'yes');
    const plain = await post(new Request(url, { method: 'POST', body: JSON.stringify(event) }));
    expect(plain.status).toBe(401);
    expect((await post(fake.eventRequest(url, event, { encryptKey: 'other-key' }))).status).toBe(400);
    expect((await post(fake.eventRequest(url, event, { signature: 'f'.repeat(64) }))).status).toBe(401);
    const forgedToken = { ...event, header: { ...(event.header as object), token: 'guess' } };
    expect((await post(fake.eventRequest(url, forgedToken))).status).toBe(401);
    expect(received).toEqual([]);
  });

  it('delivers a message without its @-mention, in its thread, once even when redelivered', async () => {
    const event = fake.messageEvent('oc_1', 'ou_alice', '部署 it', { threadRoot: 'om_root', mention: true });
    expect((await post(fake.eventRequest(url, event))).status).toBe(200);
    expect((await post(fake.eventRequest(url, event))).status).toBe(200);
    expect(received).toEqual([{ channel: 'feishu', chatId: 'oc_1', threadId: 'om_root', senderId: 'ou_alice', text: '部署 it' }]);
  });

  it('sends a shared card whose buttons carry the commands; replies in a thread', async () => {
    const ref = await adapter.send({ chatId: 'oc_1', text: 'Write wants to create a file\n/approve k3f9 once|deny', approval });
    const [sent] = fake.messagesIn('oc_1');
    expect(ref).toEqual({ chatId: 'oc_1', messageId: sent!.messageId });
    expect(sent!.text).toBe('Write wants to create a file\n/approve k3f9 once|deny');
    expect(sent!.buttons).toEqual([
      { label: '批准一次 Approve once', command: '/approve k3f9 once' },
      { label: 'Deny', command: '/approve k3f9 deny' },
    ]);
    const inThread = await adapter.send({ chatId: 'oc_1', threadId: sent!.messageId, text: 'in the thread' });
    expect(fake.messages.find((m) => m.messageId === inThread.messageId)).toMatchObject({ replyTo: sent!.messageId, chatId: 'oc_1' });
  });

  it('delivers a card tap as its command with the message ref and answers with a toast', async () => {
    const ref = await adapter.send({ chatId: 'oc_1', text: 'Approve?', approval });
    result = { handled: 'notice', notice: 'already approved by bob at 14:02' };
    const response = await post(fake.eventRequest(url, fake.tapEvent(ref.messageId, '/approve k3f9 deny', 'ou_bob')));
    expect(await response.json()).toEqual({ toast: { type: 'info', content: 'already approved by bob at 14:02' } });
    expect(received).toEqual([
      { channel: 'feishu', chatId: 'oc_1', senderId: 'ou_bob', text: '/approve k3f9 deny', fromButton: true, messageRef: { chatId: 'oc_1', messageId: ref.messageId } },
    ]);
  });

  it('updates the card and drops the buttons unless the approval is given again', async () => {
    const ref = await adapter.send({ chatId: 'oc_1', text: 'Approve?', approval });
    await adapter.edit(ref, { text: 'Denied by bob' });
    expect(fake.messagesIn('oc_1')[0]).toMatchObject({ text: 'Denied by bob', buttons: [], edited: true });
  });

  it('retries a rate limit after its reset and a 5xx, and gives up on a bad request', async () => {
    fake.failNext.push({ status: 400, code: 99991400, reset: 2 }, { status: 502, code: 1 });
    await adapter.send({ chatId: 'oc_1', text: 'hi' });
    expect(sleeps).toEqual([2000, 400]);
    fake.failNext.push({ status: 400, code: 230002 });
    await expect(adapter.send({ chatId: 'oc_404', text: 'hi' })).rejects.toThrow(ChannelSendError);
  });

  it('round-trips the event encryption', () => {
    expect(decryptFeishu(encryptFeishu('{"a":"好"}', 'k'), 'k')).toBe('{"a":"好"}');
  });
});
