import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage, InboundResult, RenderedApproval } from '../adapter.js';
import { ChannelConfigError, ChannelSendError, ChannelUnavailableError } from '../errors.js';
import { WhatsappAdapter } from './adapter.js';
import { whatsappConfigSchema } from './config.js';
import { FakeWhatsapp } from './test-support/fake-whatsapp.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const secrets = { token: 'wa-token', appSecret: 'app-secret', phoneNumberId: '1234567890' };
const env = { WHATSAPP_TOKEN: secrets.token, WHATSAPP_APP_SECRET: secrets.appSecret, WHATSAPP_VERIFY_TOKEN: 'verify-me' };

const approval: RenderedApproval = {
  interactionId: 'k3f9aaaa-0000',
  shortId: 'k3f9',
  kind: 'question',
  title: 'Which database?',
  options: [
    { value: '1', label: 'PostgreSQL with the pgvector extension', command: '/answer k3f9 1' },
    { value: '2', label: 'SQLite', command: '/answer k3f9 2' },
    { value: '3', label: 'SQLite', command: '/answer k3f9 3' },
    { value: '4', label: 'MySQL', command: '/answer k3f9 4' },
  ],
};

describe('WhatsApp adapter against a fake Cloud API', () => {
  let fake: FakeWhatsapp;
  let adapter: WhatsappAdapter;
  let received: InboundMessage[];
  let result: InboundResult;
  const sleeps: number[] = [];

  const url = (path: string) => `http://sage.test${path}`;
  const route = (method: 'GET' | 'POST') => adapter.routes.find((r) => r.method === method)!;

  beforeEach(async () => {
    fake = await new FakeWhatsapp(secrets).listen();
    const config = whatsappConfigSchema.parse({ phoneNumberId: secrets.phoneNumberId, graphApiRoot: fake.root, approvers: ['4917000'] });
    sleeps.length = 0;
    adapter = new WhatsappAdapter(config, { env, log: quiet }, { sleep: async (ms) => void sleeps.push(ms) });
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
    const other = new WhatsappAdapter(whatsappConfigSchema.parse({ phoneNumberId: secrets.phoneNumberId, graphApiRoot: fake.root }), { env, log: quiet });
    const info = await other.start(async () => ({ handled: 'ignored' }));
    expect(info.description).toBe(`whatsapp: +1 555-000-1111 (Sage Test) via ${fake.root}, webhook at /channels/whatsapp`);
  });

  it('rejects a wrong token at start, naming the env var', async () => {
    const bad = new WhatsappAdapter(whatsappConfigSchema.parse({ phoneNumberId: secrets.phoneNumberId, graphApiRoot: fake.root }), { env: { ...env, WHATSAPP_TOKEN: 'nope' }, log: quiet });
    await expect(bad.start(async () => ({ handled: 'ignored' }))).rejects.toThrow(ChannelUnavailableError);
    await expect(bad.start(async () => ({ handled: 'ignored' }))).rejects.toThrow(/WHATSAPP_TOKEN/);
  });

  it('names the missing secret', () => {
    const config = whatsappConfigSchema.parse({ phoneNumberId: '1' });
    expect(() => new WhatsappAdapter(config, { env: { WHATSAPP_TOKEN: 't', WHATSAPP_VERIFY_TOKEN: 'v' }, log: quiet })).toThrow(ChannelConfigError);
    expect(() => new WhatsappAdapter(config, { env: { WHATSAPP_TOKEN: 't', WHATSAPP_VERIFY_TOKEN: 'v' }, log: quiet })).toThrow(/channels\.whatsapp\.appSecretEnv/);
  });

  it('answers the subscription check only with the right verify token', async () => {
    const ok = await route('GET').handle(new Request(url('/channels/whatsapp?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444')));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('1158201444');
    const bad = await route('GET').handle(new Request(url('/channels/whatsapp?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1')));
    expect(bad.status).toBe(403);
  });

  it('refuses unsigned and wrongly signed deliveries with 401 and delivers nothing', async () => {
    const body = fake.textFrom('4917000', 'yes');
    const unsigned = await route('POST').handle(new Request(url('/channels/whatsapp'), { method: 'POST', body: JSON.stringify(body) }));
    expect(unsigned.status).toBe(401);
    const forged = await route('POST').handle(fake.signedRequest(url('/channels/whatsapp'), body, 'not-the-secret'));
    expect(forged.status).toBe(401);
    const garbled = new Request(url('/channels/whatsapp'), { method: 'POST', headers: { 'x-hub-signature-256': 'sha256=zz' }, body: JSON.stringify(body) });
    expect((await route('POST').handle(garbled)).status).toBe(401);
    expect(received).toEqual([]);
  });

  it('delivers a typed message once, even when Meta redelivers it', async () => {
    const body = fake.textFrom('4917000', 'hello there', 'Alice');
    expect((await route('POST').handle(fake.signedRequest(url('/channels/whatsapp'), body))).status).toBe(200);
    expect((await route('POST').handle(fake.signedRequest(url('/channels/whatsapp'), body))).status).toBe(200);
    expect(received).toEqual([{ channel: 'whatsapp', chatId: '4917000', senderId: '4917000', senderName: 'Alice', text: 'hello there' }]);
  });

  it('drops a signed payload it does not understand, answering 200 so Meta stops retrying', async () => {
    const response = await route('POST').handle(fake.signedRequest(url('/channels/whatsapp'), { object: 'page', entry: 'x' }));
    expect(response.status).toBe(200);
    const status = await route('POST').handle(
      fake.signedRequest(url('/channels/whatsapp'), { object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { statuses: [{ id: 'x' }] } }] }] }),
    );
    expect(status.status).toBe(200);
    expect(received).toEqual([]);
  });

  it('sends at most 3 reply buttons with unique titles of at most 20 characters, carrying the commands', async () => {
    const ref = await adapter.send({ chatId: '4917000', text: 'Which database? Type /answer k3f9 1…4', approval });
    const [sent] = fake.messagesTo('4917000');
    expect(ref).toEqual({ chatId: '4917000', messageId: sent!.messageId });
    expect(sent!.type).toBe('interactive');
    expect(sent!.buttons).toEqual([
      { id: '/answer k3f9 1', title: 'PostgreSQL with the…' },
      { id: '/answer k3f9 2', title: 'SQLite' },
      { id: '/answer k3f9 3', title: '3. SQLite' },
    ]);
    expect(sent!.text).toBe('Which database? Type /answer k3f9 1…4');
    expect(JSON.stringify(sent!.body)).toContain('1 more: type the command shown above');
  });

  it('splits an approval whose text is past the 1024-character body: full text first, buttons last', async () => {
    const long = 'x'.repeat(1500);
    const ref = await adapter.send({ chatId: '4917000', text: long, approval });
    const sent = fake.messagesTo('4917000');
    expect(sent.map((m) => m.type)).toEqual(['text', 'interactive']);
    expect(sent[0]!.text).toBe(long);
    expect(ref.messageId).toBe(sent[1]!.messageId);
  });

  it('delivers a button tap as its command with the message that carried it, and replies with the notice', async () => {
    const ref = await adapter.send({ chatId: '4917000', text: 'Approve?', approval });
    result = { handled: 'notice', notice: 'already approved by bob at 14:02' };
    await route('POST').handle(fake.signedRequest(url('/channels/whatsapp'), fake.tapFrom('4917000', ref.messageId, '/answer k3f9 2', 'SQLite')));
    expect(received).toEqual([
      { channel: 'whatsapp', chatId: '4917000', senderId: '4917000', text: '/answer k3f9 2', fromButton: true, messageRef: { chatId: '4917000', messageId: ref.messageId } },
    ]);
    const notice = fake.messagesTo('4917000').at(-1)!;
    expect(notice.text).toBe('already approved by bob at 14:02');
    expect(notice.type).toBe('text');
  });

  it('edits by replying to the prompt (the Cloud API cannot edit)', async () => {
    const ref = await adapter.send({ chatId: '4917000', text: 'Approve?', approval });
    await adapter.edit(ref, { text: 'Approved by alice' });
    const reply = fake.messagesTo('4917000').at(-1)!;
    expect(reply).toMatchObject({ type: 'text', text: 'Approved by alice', contextId: ref.messageId });
  });

  it('waits out a 429 with retry-after and a 5xx, then sends', async () => {
    fake.failNext.push({ status: 429, retryAfter: 2 }, { status: 503 });
    await adapter.send({ chatId: '4917000', text: 'hi' });
    expect(sleeps).toEqual([2000, 400]);
    expect(fake.messagesTo('4917000')).toHaveLength(1);
  });

  it('gives up at once on a 400 with ChannelSendError', async () => {
    fake.failNext.push({ status: 400, code: 131009 });
    await expect(adapter.send({ chatId: '4917000', text: 'hi' })).rejects.toThrow(ChannelSendError);
    expect(sleeps).toEqual([]);
  });
});
