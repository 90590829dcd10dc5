import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ManualClock } from '../model/recovery/test-support/manual-clock.js';
import { DurableRunDriver } from '../server/durable-driver.js';
import { eventually } from '../server/test-support/harness.js';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import type { ChannelAdapterFactory, ChannelRoute } from './adapter.js';
import { feishuAdapterFactory } from './feishu/adapter.js';
import { FakeFeishu } from './feishu/test-support/fake-feishu.js';
import { slackAdapterFactory } from './slack/adapter.js';
import { FakeSlack } from './slack/test-support/fake-slack.js';
import { startChannels, type RunningChannels } from './start-channels.js';
import { telegramAdapterFactory } from './telegram/adapter.js';
import { FakeBotApi } from './telegram/test-support/fake-bot-api.js';
import { whatsappAdapterFactory } from './whatsapp/adapter.js';
import { FakeWhatsapp } from './whatsapp/test-support/fake-whatsapp.js';

/**
 * A platform delivery taken before a restart and delivered again after it (a redelivery the
 * platform makes when it saw no answer, or a captured request posted again) is dropped: the ids a
 * channel took are in the store, so a new hub and adapter over the same store know them. Each test
 * sends `/status` (the core replies "No run in this chat."), restarts, sends the same delivery
 * again and then a new one: one more reply, not two. Through startChannels, as `sage serve` wires it.
 */
const NO_RUN = 'No run in this chat.';

let dir: string;
let store: Store;
let driver: DurableRunDriver;
let running: RunningChannels | undefined;
const clock = new ManualClock({ start: Date.now() });
const warnings: string[] = [];
const log = { info() {}, debug() {}, error() {}, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-redelivery-')));
  store = await openSqliteStore(join(dir, 'sage.db'));
  driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
});
afterEach(async () => {
  await running?.stop();
  running = undefined;
});
afterAll(async () => {
  await driver?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(config: Record<string, unknown>, factory: ChannelAdapterFactory, env: Record<string, string>): Promise<RunningChannels> {
  running = (await startChannels({ store, driver, config, factories: [factory], env, log, clock }))!;
  return running;
}
/** A new hub and adapter over the same store, as after a restart of the server. */
async function restart(config: Record<string, unknown>, factory: ChannelAdapterFactory, env: Record<string, string>): Promise<RunningChannels> {
  await running?.stop();
  return start(config, factory, env);
}
const route = (path: string, method = 'POST'): ChannelRoute => running!.routes.find((r) => r.path === path && r.method === method)!;

describe('Telegram: an update_id taken before a restart', { timeout: 60_000 }, () => {
  test('posted again to the webhook after a restart is acknowledged and ignored', async () => {
    const fake = await new FakeBotApi('4242:redelivery-token_A').listen();
    try {
      const env = { TELEGRAM_BOT_TOKEN: '4242:redelivery-token_A', TELEGRAM_WEBHOOK_SECRET: 'hook-secret_1' };
      const config = { telegram: { apiRoot: fake.apiRoot, mode: 'webhook', webhookUrl: 'https://sage.example/channels/telegram', approvers: ['1001'] } };
      await start(config, telegramAdapterFactory, env);
      const post = (update: unknown) =>
        route('/channels/telegram').handle(new Request('https://sage.example/channels/telegram', { method: 'POST', headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': 'hook-secret_1' }, body: JSON.stringify(update) }));
      const alice = { id: 1001, username: 'alice' };
      const replies = () => fake.messagesIn('1001').filter((m) => m.text.startsWith(NO_RUN));
      const first = fake.userSays('1001', alice, '/status');
      const update = fake.pendingUpdates().find((u) => u.update_id === first)!;
      expect((await post(update)).status).toBe(200);
      await eventually(() => replies().length === 1 || undefined, 15_000);

      await restart(config, telegramAdapterFactory, env);
      // Telegram is answered 200 (or it would deliver it again), and the core never hears of it.
      expect((await post(update)).status).toBe(200);
      const fresh = fake.userSays('1001', alice, '/status');
      expect((await post(fake.pendingUpdates().find((u) => u.update_id === fresh)!)).status).toBe(200);
      await eventually(() => replies().length >= 2 || undefined, 15_000);
      await running!.stop();
      expect(replies()).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});

describe('Slack: an event_id taken before a restart', { timeout: 60_000 }, () => {
  test('delivered again over Socket Mode after a restart is acked and ignored', async () => {
    const tokens = { botToken: 'xoxb-redelivery', appToken: 'xapp-redelivery' };
    const fake = await new FakeSlack(tokens).listen();
    try {
      const env = { SLACK_BOT_TOKEN: tokens.botToken, SLACK_APP_TOKEN: tokens.appToken };
      const config = { slack: { slackApiUrl: fake.apiUrl, approvers: ['U0ALICE'] } };
      const event = (eventId: string, ts: string) => ({
        token: 'verification',
        team_id: 'T0001',
        api_app_id: 'A0001',
        type: 'event_callback',
        event_id: eventId,
        event_time: Math.floor(clock.now() / 1000),
        event: { type: 'message', channel: 'D0ALICE', user: 'U0ALICE', text: '/status', ts, channel_type: 'im', event_ts: ts },
      });
      const replies = () => fake.messagesIn('D0ALICE').filter((m) => m.text.startsWith(NO_RUN));
      await start(config, slackAdapterFactory, env);
      await fake.deliver('events_api', event('Ev0REDELIVER1', '1800000000.000100'));
      await eventually(() => replies().length === 1 || undefined, 15_000);

      await restart(config, slackAdapterFactory, env);
      await fake.deliver('events_api', event('Ev0REDELIVER1', '1800000000.000100'));
      await fake.deliver('events_api', event('Ev0REDELIVER2', '1800000001.000100'));
      await eventually(() => replies().length >= 2 || undefined, 15_000);
      await running!.stop();
      expect(replies()).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});

describe('WhatsApp: a message id taken before a restart', { timeout: 60_000 }, () => {
  test('in a signed delivery posted again after a restart is acknowledged and ignored; one older than Meta redelivers is dropped', async () => {
    const secrets = { token: 'wa-redelivery', appSecret: 'wa-app-secret', phoneNumberId: '1098765432' };
    const fake = await new FakeWhatsapp(secrets).listen();
    try {
      const env = { WHATSAPP_TOKEN: secrets.token, WHATSAPP_APP_SECRET: secrets.appSecret, WHATSAPP_VERIFY_TOKEN: 'wa-verify' };
      const config = { whatsapp: { phoneNumberId: secrets.phoneNumberId, graphApiRoot: fake.root, approvers: ['4917600000001'] } };
      const replies = () => fake.messagesTo('4917600000001').filter((m) => (m.text ?? '').startsWith(NO_RUN));
      const post = (body: unknown) => route('/channels/whatsapp').handle(fake.signedRequest('http://sage.test/channels/whatsapp', body));
      await start(config, whatsappAdapterFactory, env);
      const delivery = fake.textFrom('4917600000001', '/status', 'alice');
      expect((await post(delivery)).status).toBe(200);
      expect(replies()).toHaveLength(1);

      await restart(config, whatsappAdapterFactory, env);
      expect((await post(delivery)).status).toBe(200);
      expect(replies()).toHaveLength(1);
      expect((await post(fake.textFrom('4917600000001', '/status', 'alice'))).status).toBe(200);
      expect(replies()).toHaveLength(2);
      // Signed by Meta but sent 8 days ago: older than Meta ever redelivers (7 days), so older than the
      // ids kept; a capture replayed that late is dropped by its own (signed) timestamp.
      const late = fake.textFrom('4917600000001', '/status', 'alice') as { entry: { changes: { value: { messages: { timestamp: string }[] } }[] }[] };
      late.entry[0]!.changes[0]!.value.messages[0]!.timestamp = String(Math.floor(clock.now() / 1000) - 8 * 24 * 3600);
      expect((await post(late)).status).toBe(200);
      expect(replies()).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});

describe('Feishu: an event_id taken before a restart, and the signing time', { timeout: 60_000 }, () => {
  test('a redelivered event after a restart is answered and ignored; a signed delivery more than 300 s off the clock is refused (401)', async () => {
    const creds = { appId: 'cli_redelivery0001', appSecret: 'fs-secret', verificationToken: 'fs-vtoken', encryptKey: 'fs-ekey' };
    const fake = await new FakeFeishu(creds).listen();
    try {
      const env = { FEISHU_APP_ID: creds.appId, FEISHU_APP_SECRET: creds.appSecret, FEISHU_VERIFICATION_TOKEN: creds.verificationToken, FEISHU_ENCRYPT_KEY: creds.encryptKey };
      const config = { feishu: { domain: fake.domain, mode: 'webhook', verificationTokenEnv: 'FEISHU_VERIFICATION_TOKEN', encryptKeyEnv: 'FEISHU_ENCRYPT_KEY', approvers: ['ou_alice'] } };
      const replies = () => fake.messagesIn('oc_chat1').filter((m) => m.text.startsWith(NO_RUN));
      const post = (envelope: Record<string, unknown>, timestampMs = clock.now()) => route('/channels/feishu').handle(fake.eventRequest('http://sage.test/channels/feishu', envelope, { timestampMs }));
      await start(config, feishuAdapterFactory, env);
      const event = fake.messageEvent('oc_chat1', 'ou_alice', '/status');
      expect((await post(event)).status).toBe(200);
      await eventually(() => replies().length === 1 || undefined, 15_000);

      await restart(config, feishuAdapterFactory, env);
      expect((await post(event)).status).toBe(200);
      // Signed 301 s ago (a capture posted later): refused before it is even looked at.
      const stale = await post(fake.messageEvent('oc_chat1', 'ou_alice', '/status'), clock.now() - 301_000);
      expect(stale.status).toBe(401);
      expect(await stale.json()).toEqual({ error: expect.stringMatching(/X-Lark-Request-Timestamp is 30[12] s from the server's clock/) });
      expect((await post(fake.messageEvent('oc_chat1', 'ou_alice', '/status'))).status).toBe(200);
      await eventually(() => replies().length >= 2 || undefined, 15_000);
      await running!.stop();
      expect(replies()).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});
