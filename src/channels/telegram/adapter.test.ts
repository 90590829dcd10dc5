import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serverGrant } from '../../runtime/web-gate.js';
import { eventually, startHarness, type Harness } from '../../server/test-support/harness.js';
import type { InboundMessage, InboundResult, RenderedApproval } from '../adapter.js';
import { parseChannelsConfig } from '../config.js';
import { ChannelConfigError, ChannelSendError, ChannelUnavailableError } from '../errors.js';
import { ChannelHub } from '../hub.js';
import { TelegramAdapter, telegramAdapterFactory } from './adapter.js';
import { telegramConfigSchema } from './config.js';
import { FakeBotApi } from './test-support/fake-bot-api.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const TOKEN = '4242:test-token_abc';
const env = { TELEGRAM_BOT_TOKEN: TOKEN };
const alice = { id: 1001, username: 'alice' };
const mallory = { id: 6666, username: 'mallory' };

const approval: RenderedApproval = {
  interactionId: 'k3f9aaaa-0000',
  shortId: 'k3f9aa',
  kind: 'approval',
  toolName: 'Bash',
  title: 'Bash wants to run a command',
  inputView: 'ls *.ts && echo <done>',
  risk: 'medium',
  options: [
    { value: 'once', label: 'Approve once', command: '/approve k3f9aa once', style: 'primary' },
    { value: 'always', label: 'Always (this chat)', command: '/approve k3f9aa always' },
    { value: 'deny', label: 'Deny', command: '/approve k3f9aa deny', style: 'danger' },
  ],
};
const approvalText = '🔐 Approval [k3f9aa] Bash\nBash wants to run a command\nls *.ts && echo <done>\nReply /approve k3f9aa once|always|deny';

/** A port nothing listens on: bound, read, closed. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Telegram adapter against a fake Bot API', () => {
  let fake: FakeBotApi;
  let adapter: TelegramAdapter;
  let received: InboundMessage[];
  let result: InboundResult;
  let waiting: { count: number; resolve: () => void } | undefined;
  const sleeps: number[] = [];

  const make = (extra: Record<string, unknown> = {}, options: ConstructorParameters<typeof TelegramAdapter>[2] = {}) =>
    new TelegramAdapter(telegramConfigSchema.parse({ apiRoot: fake.apiRoot, approvers: ['1001'], ...extra }), { env, log: quiet }, { sleep: async (ms) => void sleeps.push(ms), ...options });
  const sink = async (m: InboundMessage): Promise<InboundResult> => {
    received.push(m);
    if (waiting && received.length >= waiting.count) waiting.resolve();
    return result;
  };
  /** Resolves once the sink has seen `count` messages in all. */
  const seen = (count: number) =>
    received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { count, resolve }));

  beforeEach(async () => {
    fake = await new FakeBotApi(TOKEN).listen();
    sleeps.length = 0;
    received = [];
    waiting = undefined;
    result = { handled: 'agent' };
    adapter = make();
  });
  afterEach(async () => {
    await adapter.stop();
    await fake.close();
  });

  it('starts: getMe names the bot, the webhook is cleared and getUpdates long-polls for messages and taps only', async () => {
    const info = await adapter.start(sink);
    expect(info.description).toBe(`telegram: @sage_test_bot via ${fake.apiRoot} (long polling)`);
    await eventually(() => fake.polling === 1);
    const methods = fake.calls.map((c) => c.method);
    expect(methods.slice(0, 4)).toEqual(['getMe', 'setMyCommands', 'deleteWebhook', 'getUpdates']);
    expect(fake.commands.map((c) => c.command)).toEqual(['approve', 'answer', 'status', 'stop', 'new']);
    const poll = fake.calls.find((c) => c.method === 'getUpdates')!.params;
    expect(poll['allowed_updates']).toEqual(['message', 'callback_query']);
    expect(poll['timeout']).toBe(30);
  });

  it('rejects a wrong token and an unreachable API at start, naming the env var and never printing the token', async () => {
    const wrong = new TelegramAdapter(telegramConfigSchema.parse({ apiRoot: fake.apiRoot }), { env: { TELEGRAM_BOT_TOKEN: '4242:wrong' }, log: quiet });
    const error = await wrong.start(sink).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelUnavailableError);
    expect((error as Error).message).toMatch(/getMe .* failed: 401 Unauthorized \(check TELEGRAM_BOT_TOKEN\)/);
    const down = new TelegramAdapter(telegramConfigSchema.parse({ apiRoot: `http://127.0.0.1:${await deadPort()}` }), { env, log: quiet });
    const downError = await down.start(sink).catch((e: unknown) => e);
    expect(downError).toBeInstanceOf(ChannelUnavailableError);
    expect((downError as Error).message).toMatch(/ECONNREFUSED/);
    expect((downError as Error).message).not.toContain(TOKEN);
  });

  it('names the field of a bad config or a missing or malformed secret', () => {
    expect(() => new TelegramAdapter(telegramConfigSchema.parse({}), { env: {}, log: quiet })).toThrow(/channels\.telegram\.tokenEnv: the environment variable TELEGRAM_BOT_TOKEN is not set/);
    expect(() => new TelegramAdapter(telegramConfigSchema.parse({ tokenEnv: 'MY_BOT' }), { env: { MY_BOT: 'not a token/../x' }, log: quiet })).toThrow(ChannelConfigError);
    expect(() => parseChannelsConfig({ telegram: { approvers: ['alice'] } }, [telegramAdapterFactory])).toThrow(/channels\.telegram\.approvers\.0: must be a Telegram user id/);
    expect(() => parseChannelsConfig({ telegram: { mode: 'webhook' } }, [telegramAdapterFactory])).toThrow(/channels\.telegram\.webhookUrl: is required in webhook mode/);
    expect(() => parseChannelsConfig({ telegram: { token: 'x' } }, [telegramAdapterFactory])).toThrow(/channels\.telegram: .*\(token\)/);
    const [parsed] = parseChannelsConfig({ telegram: { approvers: ['1001', '@Alice_99'], apiRoot: 'http://127.0.0.1:1/' } }, [telegramAdapterFactory]);
    expect(parsed!.config).toMatchObject({ approvers: ['1001', '@Alice_99'], apiRoot: 'http://127.0.0.1:1', tokenEnv: 'TELEGRAM_BOT_TOKEN', mode: 'polling' });
  });

  it('delivers a message to the core: chat, topic, sender id and name; the bot mention is dropped; bots, photos and malformed updates are not', async () => {
    await adapter.start(sink);
    fake.userSays('-100200', alice, '@sage_test_bot deploy it', { threadId: '77' });
    fake.push({ message: { message_id: 900, from: { id: 5, is_bot: true, first_name: 'OtherBot' }, chat: { id: -100200, type: 'supergroup' }, date: 1, text: 'I am a bot' } });
    fake.push({ message: { message_id: 901, from: { id: 1001, is_bot: false, first_name: 'Alice' }, chat: { id: 1001, type: 'private' }, date: 1, photo: [] } });
    fake.push({ message: { message_id: 'not a number' } });
    fake.userSays('1001', { id: 1001, firstName: 'Alice' }, 'yes');
    await seen(2);
    expect(received).toEqual([
      { channel: 'telegram', chatId: '-100200', threadId: '77', senderId: '1001', senderName: 'alice', text: 'deploy it' },
      { channel: 'telegram', chatId: '1001', senderId: '1001', senderName: 'Alice', text: 'yes' },
    ]);
  });

  it('answers /start itself (the app sends it when a person opens the bot) with how to use it and their id; nothing reaches the core', async () => {
    await adapter.start(sink);
    fake.userSays('1001', alice, '/start');
    fake.userSays('1001', alice, 'now a task');
    await seen(1);
    expect(received.map((m) => m.text)).toEqual(['now a task']);
    const [greeting] = fake.messagesIn('1001');
    expect(greeting!.text).toMatch(/^Hi alice, this is Sage\./);
    expect(greeting!.text).toContain('Your Telegram user id is 1001 (@alice)');
  });

  it('a /start from someone outside allowFrom gets no greeting (nothing is sent); their id goes to the log for the operator', async () => {
    const logged: { obj: object; msg?: string }[] = [];
    const log = { ...quiet, info: (obj: object, msg?: string) => void logged.push({ obj, msg }) };
    adapter = new TelegramAdapter(telegramConfigSchema.parse({ apiRoot: fake.apiRoot, approvers: ['1001'] }), { env, log }, { sleep: async () => {} });
    await adapter.start(sink);
    fake.userSays('4242', { id: 4242, username: 'eve' }, '/start');
    fake.userSays('1001', alice, 'now a task');
    await seen(1);
    expect(received.map((m) => m.senderId)).toEqual(['1001']);
    expect(fake.messagesIn('4242')).toEqual([]);
    expect(logged.find((l) => /\/start/.test(l.msg ?? ''))?.obj).toMatchObject({ senderId: '4242', username: '@eve' });
  });

  it('matches an approver listed by @username (any case) and passes the entry as written; others keep their numeric id', async () => {
    adapter = make({ approvers: ['@Alice'], allowFrom: ['6666'] });
    await adapter.start(sink);
    fake.userSays('1001', alice, 'hello');
    fake.userSays('1001', { id: 1002, username: 'alice_impostor' }, 'hello too');
    fake.userSays('1001', mallory, 'hi');
    await seen(3);
    expect(received.map((m) => m.senderId)).toEqual(['@Alice', '1002', '6666']);
  });

  it('sends an approval with an inline keyboard whose callback_data is the command, in HTML that shows * & < as typed', async () => {
    await adapter.start(sink);
    const ref = await adapter.send({ chatId: '-100200', threadId: '77', text: approvalText, approval });
    const [sent] = fake.messagesIn('-100200');
    expect(ref).toEqual({ chatId: '-100200', threadId: '77', messageId: String(sent!.messageId) });
    expect(sent!.threadId).toBe('77');
    expect(sent!.parseMode).toBe('HTML');
    expect(sent!.text).toBe(approvalText);
    expect(sent!.raw).toContain('<pre>ls *.ts &amp;&amp; echo &lt;done&gt;</pre>');
    expect(sent!.entities).toEqual([{ type: 'pre', offset: approvalText.indexOf('ls *.ts'), length: 'ls *.ts && echo <done>'.length }]);
    expect(sent!.keyboard).toEqual([
      [
        { text: 'Approve once', callback_data: '/approve k3f9aa once', style: 'success' },
        { text: 'Always (this chat)', callback_data: '/approve k3f9aa always' },
      ],
      [{ text: 'Deny', callback_data: '/approve k3f9aa deny', style: 'danger' }],
    ]);
    // Text that merely looks like HTML is escaped, not parsed.
    await adapter.send({ chatId: '1001', text: 'a <b>bold</b> claim & an &amp; entity' });
    expect(fake.messagesIn('1001')[0]!.text).toBe('a <b>bold</b> claim & an &amp; entity');
  });

  it('a tap is delivered as its command with the message ref and answered with the core\'s notice', async () => {
    await adapter.start(sink);
    const ref = await adapter.send({ chatId: '1001', text: approvalText, approval });
    result = { handled: 'approval', notice: 'Approved.' };
    const query = fake.userTaps('1001', Number(ref.messageId), '/approve k3f9aa once', alice);
    expect(await fake.waitForCallbackAnswer(query)).toEqual({ text: 'Approved.', show_alert: false });
    expect(received).toEqual([
      { channel: 'telegram', chatId: '1001', senderId: '1001', senderName: 'alice', text: '/approve k3f9aa once', fromButton: true, messageRef: { chatId: '1001', messageId: ref.messageId } },
    ]);
  });

  it('a tap the core refuses (not an approver) gets an alert saying so, and nothing else happens in the chat', async () => {
    await adapter.start(sink);
    const ref = await adapter.send({ chatId: '1001', text: approvalText, approval });
    result = { handled: 'notice', notice: 'Only an approver can answer "k3f9aa"; you (6666) are not one.' };
    const query = fake.userTaps('1001', Number(ref.messageId), '/approve k3f9aa once', mallory);
    expect(await fake.waitForCallbackAnswer(query)).toEqual({ text: 'Only an approver can answer "k3f9aa"; you (6666) are not one.', show_alert: true });
    expect(fake.messagesIn('1001')).toHaveLength(1);
    expect(fake.messagesIn('1001')[0]!.keyboard.flat()).toHaveLength(3);
  });

  it('answers a tap in time even when the core is slow, and a button it cannot read', async () => {
    adapter = make({}, { callbackDeadlineMs: 20 });
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    await adapter.start(async (m) => {
      await slow;
      return sink(m);
    });
    const ref = await adapter.send({ chatId: '1001', text: approvalText, approval });
    const query = fake.userTaps('1001', Number(ref.messageId), '/approve k3f9aa once', alice);
    expect(await fake.waitForCallbackAnswer(query)).toEqual({});
    release();
    const stale = fake.userTaps('1001', Number(ref.messageId), '~zz', alice);
    expect((await fake.waitForCallbackAnswer(stale)).text).toMatch(/type the command shown in the message/);
    await seen(1);
    expect(received.map((m) => m.text)).toEqual(['/approve k3f9aa once']);
  });

  it('keeps callback_data within 64 bytes: a longer command goes under a short key and a tap still delivers it whole', async () => {
    await adapter.start(sink);
    const long = `/answer ${'q'.repeat(40)} ${'ü'.repeat(10)}`;
    expect(Buffer.byteLength(long)).toBeGreaterThan(64);
    const ref = await adapter.send({
      chatId: '1001',
      text: 'Pick one',
      approval: { interactionId: 'x', shortId: 'q'.repeat(40), kind: 'question', title: 'Pick', options: [{ value: '1', label: 'First', command: long }, ...approval.options] },
    });
    const buttons = fake.messagesIn('1001')[0]!.keyboard.flat();
    for (const b of buttons) expect(Buffer.byteLength(b.callback_data)).toBeLessThanOrEqual(64);
    expect(buttons[0]!.callback_data).not.toBe(long);
    expect(buttons[1]!.callback_data).toBe('/approve k3f9aa once');
    const query = fake.userTaps('1001', Number(ref.messageId), buttons[0]!.callback_data, alice);
    await fake.waitForCallbackAnswer(query);
    expect(received.map((m) => m.text)).toEqual([long]);
  });

  it('splits text over 4096 characters into several messages (at line breaks), the keyboard on the last one', async () => {
    await adapter.start(sink);
    const line = `${'x'.repeat(99)}\n`;
    const text = line.repeat(100) + 'end <of> text';
    const ref = await adapter.send({ chatId: '1001', text, approval });
    const sent = fake.messagesIn('1001');
    expect(sent.length).toBe(3);
    for (const m of sent) expect(m.text.length).toBeLessThanOrEqual(4096);
    expect(sent.map((m) => m.text).join('\n')).toBe(text);
    expect(sent.slice(0, -1).every((m) => m.keyboard.length === 0)).toBe(true);
    expect(sent.at(-1)!.keyboard.flat()).toHaveLength(3);
    expect(ref.messageId).toBe(String(sent.at(-1)!.messageId));
    // No line break or space to cut at: a hard cut that never splits an emoji's surrogate pair.
    await adapter.send({ chatId: '2002', text: `${'y'.repeat(4095)}😀${'z'.repeat(10)}` });
    expect(fake.messagesIn('2002').map((m) => m.text)).toEqual(['y'.repeat(4095), `😀${'z'.repeat(10)}`]);
  });

  it('an edit after the answer says who answered and removes the keyboard; an edit that changes nothing is not an error', async () => {
    await adapter.start(sink);
    const ref = await adapter.send({ chatId: '1001', text: approvalText, approval });
    await adapter.edit(ref, { text: `${approvalText}\n\n✅ Approved by alice in telegram at 20:15 UTC` });
    const [message] = fake.messagesIn('1001');
    expect(message).toMatchObject({ text: `${approvalText}\n\n✅ Approved by alice in telegram at 20:15 UTC`, edited: true, keyboard: [] });
    // The command still shows as code after the edit.
    expect(message!.entities).toEqual([{ type: 'pre', offset: approvalText.indexOf('ls *.ts'), length: 'ls *.ts && echo <done>'.length }]);
    await adapter.edit(ref, { text: `${approvalText}\n\n✅ Approved by alice in telegram at 20:15 UTC` });
    // Kept buttons when the approval is given again; a text past 4096 keeps its end (the outcome).
    await adapter.edit(ref, { text: `${'w'.repeat(5000)}\n❌ Denied`, approval });
    expect(fake.messagesIn('1001')[0]!.text.endsWith('w\n❌ Denied')).toBe(true);
    expect(fake.messagesIn('1001')[0]!.text.length).toBe(4096);
    expect(fake.messagesIn('1001')[0]!.keyboard.flat()).toHaveLength(3);
  });

  it('retries a 429 after its retry_after and a 500 with backoff, then gives up at once on a 400', async () => {
    await adapter.start(sink);
    fake.failNext.push({ status: 429, retryAfter: 3 }, { status: 500 });
    await adapter.send({ chatId: '1001', text: 'hi' });
    expect(sleeps).toEqual([3000, 400]);
    expect(fake.messagesIn('1001')).toHaveLength(1);
    fake.failNext.push({ status: 400, description: 'Bad Request: chat not found' });
    const error = await adapter.send({ chatId: '404', text: 'hi' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelSendError);
    expect((error as ChannelSendError).status).toBe(400);
    expect((error as Error).message).toMatch(/chat not found/);
    await expect(adapter.edit({ chatId: '1001', messageId: '999' }, { text: 'x' })).rejects.toThrow(/message to edit not found/);
  });

  it('stops: polling ends, the offset is confirmed so a restarted bot does not see old updates, later ones reach it', async () => {
    await adapter.start(sink);
    fake.userSays('1001', alice, 'first');
    await seen(1);
    await adapter.stop();
    await adapter.stop();
    expect(fake.polling).toBe(0);
    fake.userSays('1001', alice, 'while down');
    const next = make();
    adapter = next;
    await next.start(sink);
    await seen(2);
    expect(received.map((m) => m.text)).toEqual(['first', 'while down']);
  });

  it('a second process polling the same token takes over: the first logs that long polling stopped (409) and the second gets the messages', async () => {
    const errors: string[] = [];
    const log = { ...quiet, error: (_: object, msg?: string) => void errors.push(msg ?? '') };
    adapter = new TelegramAdapter(telegramConfigSchema.parse({ apiRoot: fake.apiRoot }), { env, log });
    await adapter.start(async () => ({ handled: 'ignored' }));
    await eventually(() => fake.polling === 1);
    const second = make();
    try {
      await second.start(sink);
      await eventually(() => errors.find((e) => /long polling stopped: 409 Conflict: terminated by other getUpdates request/.test(e)));
      fake.userSays('1001', alice, 'to the second');
      await seen(1);
      expect(received.map((m) => m.text)).toEqual(['to the second']);
    } finally {
      await second.stop();
    }
  });

  it('webhook mode: registers the URL with its secret, takes only deliveries carrying it, and drops a redelivery', async () => {
    adapter = new TelegramAdapter(
      telegramConfigSchema.parse({ apiRoot: fake.apiRoot, mode: 'webhook', webhookUrl: 'https://sage.example/channels/telegram', approvers: ['1001'] }),
      { env: { ...env, TELEGRAM_WEBHOOK_SECRET: 'hook-secret_1' }, log: quiet },
    );
    expect(adapter.routes.map((r) => [r.method, r.path])).toEqual([['POST', '/channels/telegram']]);
    const info = await adapter.start(sink);
    expect(info.description).toBe(`telegram: @sage_test_bot via ${fake.apiRoot} (webhook https://sage.example/channels/telegram)`);
    expect(fake.webhook).toEqual({ url: 'https://sage.example/channels/telegram', secretToken: 'hook-secret_1', allowedUpdates: ['message', 'callback_query'] });
    expect(fake.calls.some((c) => c.method === 'getUpdates')).toBe(false);
    fake.userSays('1001', alice, 'via webhook');
    const [update] = fake.pendingUpdates();
    const post = (secret: string) =>
      adapter.routes[0]!.handle(new Request(fake.webhook!.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret }, body: JSON.stringify(update) }));
    expect((await post('wrong-secret')).status).toBe(401);
    expect(received).toEqual([]);
    expect((await post('hook-secret_1')).status).toBe(200);
    expect((await post('hook-secret_1')).status).toBe(200);
    await adapter.stop();
    expect(received.map((m) => m.text)).toEqual(['via webhook']);
    expect(() => new TelegramAdapter(telegramConfigSchema.parse({ mode: 'webhook', webhookUrl: 'https://x.example/h' }), { env, log: quiet })).toThrow(/channels\.telegram\.webhookSecretEnv/);
  });
});

/**
 * The adapter with the real channel core, server driver and store: a Telegram message starts a run,
 * its approval arrives with a keyboard, a non-approver's tap is refused, an approver's tap decides
 * and the prompt is edited to say who answered.
 */
describe('Telegram adapter with the channel core', () => {
  let h: Harness;
  let fake: FakeBotApi;
  let hub: ChannelHub;
  let model = '';
  let n = 0;

  beforeAll(async () => {
    h = await startHarness();
    fake = await new FakeBotApi(TOKEN).listen();
    const config = telegramConfigSchema.parse({ apiRoot: fake.apiRoot, approvers: ['@alice'], allowFrom: ['6666'] });
    hub = new ChannelHub({
      store: h.store,
      runner: h.driver.runner,
      admitRun: (request) => h.driver.factory.admitRun(request),
      model: () => model,
      cwd: () => h.dir,
      serverGrant: () => serverGrant('user', h.driver.serverPolicy),
      channels: [{ adapter: new TelegramAdapter(config, { env, log: quiet }, { sleep: async () => {} }), config }],
      log: quiet,
    });
    await hub.start();
  });
  afterAll(async () => {
    await hub?.stop();
    await fake?.close();
    await h?.close();
  });

  async function runAsking(): Promise<{ chatId: string; file: string; prompt: { messageId: number; keyboard: { callback_data: string }[][] } }> {
    const chatId = String(-100_900 - ++n);
    const file = join(h.dir, `tg-${n}.txt`);
    model = h.script([{ toolCalls: [{ name: 'Bash', input: { command: `touch ${file}` } }] }, { text: `made tg-${n}` }]);
    fake.userSays(chatId, alice, 'please make the file');
    const prompt = await eventually(() => fake.messagesIn(chatId).find((m) => m.keyboard.length > 0), 15_000);
    return { chatId, file, prompt };
  }

  it('message → run → approval keyboard; a non-approver\'s tap is refused and decides nothing; the approver\'s tap allows and the prompt says who', async () => {
    const { chatId, file, prompt } = await runAsking();
    expect(prompt.keyboard.flat().map((b) => b.callback_data)).toEqual([expect.stringMatching(/^\/approve \w{6} once$/), expect.stringMatching(/ always$/), expect.stringMatching(/ deny$/)]);
    const once = prompt.keyboard.flat()[0]!.callback_data;
    const refused = await fake.waitForCallbackAnswer(fake.userTaps(chatId, prompt.messageId, once, mallory));
    expect(refused).toEqual({ text: expect.stringMatching(/Only an approver can answer .*you \(6666\) are not one/), show_alert: true });
    expect(existsSync(file)).toBe(false);
    expect(fake.messagesIn(chatId).find((m) => m.messageId === prompt.messageId)!.keyboard.length).toBeGreaterThan(0);
    const allowed = await fake.waitForCallbackAnswer(fake.userTaps(chatId, prompt.messageId, once, alice));
    expect(allowed).toEqual({ text: 'Approved.', show_alert: false });
    await eventually(() => existsSync(file), 15_000);
    await eventually(() => fake.messagesIn(chatId).some((m) => m.text === `made tg-${n}`), 15_000);
    const edited = await eventually(() => fake.messagesIn(chatId).find((m) => m.messageId === prompt.messageId && m.edited), 15_000);
    expect(edited.text).toMatch(/✅ Approved by @?alice in telegram at \d\d:\d\d UTC$/);
    expect(edited.keyboard).toEqual([]);
    // A second tap on the stale button: told it is no longer open.
    const late = await fake.waitForCallbackAnswer(fake.userTaps(chatId, prompt.messageId, once, alice));
    expect(late.text).toMatch(/is no longer open: approved by @?alice in telegram/);
  });

  it('a tap on deny: nothing runs, the prompt says denied and loses its keyboard', async () => {
    const { chatId, file, prompt } = await runAsking();
    const deny = prompt.keyboard.flat().find((b) => b.callback_data.endsWith(' deny'))!.callback_data;
    expect(await fake.waitForCallbackAnswer(fake.userTaps(chatId, prompt.messageId, deny, alice))).toEqual({ text: 'Denied.', show_alert: false });
    const edited = await eventually(() => fake.messagesIn(chatId).find((m) => m.messageId === prompt.messageId && m.edited), 15_000);
    expect(edited.text).toMatch(/❌ Denied by @?alice in telegram/);
    expect(edited.keyboard).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });
});
