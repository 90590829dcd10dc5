import { describe, expect, it } from 'vitest';
import { channelField, channelKind, channelRoutePath } from './adapter.js';
import { parseChannelsConfig } from './config.js';
import { ChannelConfigError } from './errors.js';
import { CHANNEL_KINDS, channelFactories } from './serve.js';
import { startChannels } from './start-channels.js';
import { webhookChannel } from './webhook/webhook-adapter.js';

/** `channels` keys: a kind (`slack`) or a kind and an instance name (`slack:T123`). */
const webhook = (secretEnv: string) => ({ secretEnv, outboundUrl: 'http://127.0.0.1:9/hook' });
const parse = (raw: unknown) => parseChannelsConfig(raw, CHANNEL_FACTORIES);
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const CHANNEL_FACTORIES = await channelFactories();

describe('channels config keys', () => {
  it('a bare kind keeps its id; "kind:name" is the instance id, with the kind\'s schema and defaults', () => {
    const parsed = parse({ webhook: webhook('A'), 'webhook:ci': webhook('B'), 'slack:T123': { botTokenEnv: 'T123_BOT', appTokenEnv: 'T123_APP' }, 'telegram:support_2-x': {} });
    expect(parsed.map((p) => [p.name, p.factory.kind])).toEqual([
      ['webhook', 'webhook'],
      ['webhook:ci', 'webhook'],
      ['slack:T123', 'slack'],
      ['telegram:support_2-x', 'telegram'],
    ]);
    expect(parsed[2]!.config).toMatchObject({ botTokenEnv: 'T123_BOT', approvalTimeoutSeconds: 1800, slackApiUrl: 'https://slack.com/api/' });
  });

  it.each([
    ['slack:', 'channels["slack:"]: the instance name after "slack:" must be 1-64 characters'],
    ['slack:a b', 'channels["slack:a b"]: the instance name'],
    ['slack:a:b', 'channels["slack:a:b"]: the instance name'],
    [`slack:${'x'.repeat(65)}`, 'the instance name'],
    ['slack:é', 'the instance name'],
    ['nope:x', 'channels["nope:x"]: unknown channel kind "nope"'],
    ['nope', 'channels.nope: unknown channel kind "nope"'],
  ])('a bad key stops the start naming it: %s', (key, message) => {
    expect(() => parse({ [key]: {} })).toThrow(ChannelConfigError);
    expect(() => parse({ [key]: {} })).toThrow(message);
  });

  it('a 64-character name is accepted (and the channel id fits the stored run and answer)', () => {
    const name = `whatsapp:${'n'.repeat(64)}`;
    expect(parse({ [name]: { phoneNumberId: '123' } })[0]!.name).toBe(name);
  });

  it("a bad field of an instance is named with the instance's key", () => {
    expect(() => parse({ 'webhook:ci': { secretEnv: 'X' } })).toThrow('channels["webhook:ci"].outboundUrl: ');
    expect(() => parse({ 'telegram:support': { approvers: ['alice'] } })).toThrow('channels["telegram:support"].approvers.0: must be a Telegram user id');
    expect(() => parse({ 'slack:T1': { token: 'x' } })).toThrow(/channels\["slack:T1"\]: .*\(token\)/);
    expect(() => parseChannelsConfig({ webhook: {} }, CHANNEL_FACTORIES, 'f.json: channels')).toThrow('f.json: channels.webhook.secretEnv');
  });

  it('two instances of one kind may not share what identifies their connection (after defaults)', () => {
    // Both on SLACK_BOT_TOKEN / SLACK_APP_TOKEN: one Socket Mode app would split its events between them.
    expect(() => parse({ slack: {}, 'slack:T2': {} })).toThrow('channels["slack:T2"].botTokenEnv: SLACK_BOT_TOKEN is also the botTokenEnv of channels.slack; each slack instance needs its own');
    expect(() => parse({ slack: {}, 'slack:T2': { botTokenEnv: 'T2_BOT' } })).toThrow('channels["slack:T2"].appTokenEnv: SLACK_APP_TOKEN is also');
    expect(() => parse({ 'telegram:a': {}, 'telegram:b': {} })).toThrow('channels["telegram:b"].tokenEnv: TELEGRAM_BOT_TOKEN is also the tokenEnv of channels["telegram:a"]');
    expect(() => parse({ 'webhook:a': webhook('S'), 'webhook:b': webhook('S') })).toThrow('channels["webhook:b"].secretEnv: S is also');
    expect(() => parse({ whatsapp: { phoneNumberId: '1' }, 'whatsapp:b': { phoneNumberId: '1' } })).toThrow('channels["whatsapp:b"].phoneNumberId');
    expect(() => parse({ 'feishu:a': {}, 'feishu:b': {} })).toThrow('channels["feishu:b"].appIdEnv: FEISHU_APP_ID is also');
    // Different kinds never clash, and distinct values pass.
    expect(parse({ slack: {}, 'slack:T2': { botTokenEnv: 'T2_BOT', appTokenEnv: 'T2_APP' }, 'webhook:a': webhook('S'), webhook: webhook('T') })).toHaveLength(4);
  });

  it('a named instance of a webhook-style platform gets its own route path unless webhookPath says otherwise; the bare kind keeps its path', () => {
    const [bare, named, explicit, tg, fs] = parse({
      whatsapp: { phoneNumberId: '1' },
      'whatsapp:Sales': { phoneNumberId: '2' },
      'whatsapp:eu': { phoneNumberId: '3', webhookPath: '/channels/wa-eu' },
      'telegram:support': { mode: 'webhook', webhookUrl: 'https://x.example/channels/telegram/support' },
      'feishu:cn': { mode: 'webhook', verificationTokenEnv: 'V' },
    });
    expect([bare, named, explicit, tg, fs].map((p) => p!.config['webhookPath'])).toEqual(['/channels/whatsapp', '/channels/whatsapp/Sales', '/channels/wa-eu', '/channels/telegram/support', '/channels/feishu/cn']);
  });

  it('helpers: kind, field path and route path of a channel id', () => {
    expect([channelKind('slack'), channelKind('slack:T1')]).toEqual(['slack', 'slack']);
    expect([channelField('slack', 'botTokenEnv'), channelField('slack:T1', 'botTokenEnv'), channelField('slack:T1')]).toEqual(['channels.slack.botTokenEnv', 'channels["slack:T1"].botTokenEnv', 'channels["slack:T1"]']);
    expect([channelRoutePath('webhook'), channelRoutePath('webhook:ci')]).toEqual(['/channels/webhook', '/channels/webhook/ci']);
  });
});

describe('adapters built for an instance', () => {
  const env = { WHATSAPP_TOKEN: 't', WHATSAPP_APP_SECRET: 's', WHATSAPP_VERIFY_TOKEN: 'v', TELEGRAM_BOT_TOKEN: '4242:abc', TELEGRAM_WEBHOOK_SECRET: 'w', FEISHU_APP_ID: 'i', FEISHU_APP_SECRET: 's', OTHER_APP_ID: 'o', V: 'v', SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1', S: 's' };
  it('take the instance id as their name and mount their routes at its path; bare kinds keep theirs', () => {
    const parsed = parse({
      'whatsapp:eu': { phoneNumberId: '3' },
      'telegram:support': { mode: 'webhook', webhookUrl: 'https://x.example/channels/telegram/support' },
      'feishu:cn': { mode: 'webhook', verificationTokenEnv: 'V' },
      'slack:T1': {},
      'webhook:ci': webhook('S'),
      feishu: { mode: 'webhook', verificationTokenEnv: 'V', appIdEnv: 'OTHER_APP_ID' },
    });
    const adapters = parsed.map(({ factory, name, config }) => factory.create(config, { env, log: silent, name }));
    expect(adapters.map((a) => [a.name, a.routes.map((r) => `${r.method} ${r.path}`)])).toEqual([
      ['whatsapp:eu', ['GET /channels/whatsapp/eu', 'POST /channels/whatsapp/eu']],
      ['telegram:support', ['POST /channels/telegram/support']],
      ['feishu:cn', ['POST /channels/feishu/cn']],
      ['slack:T1', []],
      ['webhook:ci', ['POST /channels/webhook/ci']],
      ['feishu', ['POST /channels/feishu']],
    ]);
  });
});

describe('channelFactories', () => {
  it('loads the adapters of the kinds the config names, in the order of every kind; an unknown kind loads them all', async () => {
    const kinds = async (config: unknown) => (await channelFactories(config)).map((f) => f.kind);
    expect(await kinds({ 'slack:T1': {}, webhook: {}, 'webhook:ci': {} })).toEqual(['webhook', 'slack']);
    expect(await kinds({})).toEqual([]);
    expect(await kinds({ telgram: {} })).toEqual(CHANNEL_KINDS);
    expect(await kinds({ constructor: {} })).toEqual(CHANNEL_KINDS);
    expect(CHANNEL_KINDS).toEqual(['webhook', 'telegram', 'slack', 'feishu', 'whatsapp']);
    expect(() => parseChannelsConfig({ telgram: {} }, CHANNEL_FACTORIES)).toThrow('unknown channel kind "telgram"; this build has webhook, telegram, slack, feishu, whatsapp');
  });
});

describe('startChannels with instances', () => {
  it("a missing secret of an instance is named with the instance's key", async () => {
    const start = startChannels({ store: {} as never, driver: {} as never, config: { 'webhook:ci': webhook('CI_SECRET') }, factories: [webhookChannel], env: {}, log: silent });
    await expect(start).rejects.toThrow('channels["webhook:ci"].secretEnv: the environment variable CI_SECRET is not set');
  });

  it('two channels on one inbound route stop the start, naming both', async () => {
    const config = { whatsapp: { phoneNumberId: '1' }, 'whatsapp:b': { phoneNumberId: '2', webhookPath: '/channels/whatsapp' } };
    const env = { WHATSAPP_TOKEN: 't', WHATSAPP_APP_SECRET: 's', WHATSAPP_VERIFY_TOKEN: 'v' };
    const start = startChannels({ store: {} as never, driver: {} as never, config, factories: CHANNEL_FACTORIES, env, log: silent });
    await expect(start).rejects.toThrow('channels["whatsapp:b"]: its inbound route GET /channels/whatsapp is also channels.whatsapp\'s');
  });
});
