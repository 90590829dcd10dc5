import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunDriver } from '../server/durable-driver.js';
import { eventually } from '../server/test-support/harness.js';
import { openSqliteStore } from '../store/open-store.js';
import type { RunRecord, Store } from '../store/index.js';
import { channelCommonConfigSchema, type ChannelRoute } from './adapter.js';
import { ChannelHub } from './hub.js';
import { hubOverDriver } from './test-support/hub-over-driver.js';
import { makeSlackHarness } from './slack/test-support/harness.js';
import { startChannels, type RunningChannels } from './start-channels.js';
import type { ChannelTestHarness } from './test-harness.js';
import { startFakeWebhookPeer } from './webhook/test-support/fake-webhook-peer.js';
import { webhookChannel, webhookSignatureHeaders } from './webhook/webhook-adapter.js';

/**
 * Several instances of one platform on one server (two Slack workspaces, two webhooks):
 * each is its own channel id (`webhook:a`, `slack:A`) in sessions, answers and the audit, has its
 * own inbound route and secret, and never answers (or hears of) the other's asks, even for the same
 * chat id and the same short id.
 */
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const alice = { senderId: '1001', senderName: 'alice' };

describe('two webhook instances and the bare webhook through startChannels', { timeout: 60_000 }, () => {
  const secrets = { webhook: 'secret-bare', 'webhook:a': 'secret-a', 'webhook:b': 'secret-b' } as const;
  type Name = keyof typeof secrets;
  let dir: string;
  let store: Store;
  let driver: DurableRunDriver;
  let running: RunningChannels;
  const peers = new Map<Name, Awaited<ReturnType<typeof startFakeWebhookPeer>>>();

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-channel-instances-')));
    // Every chat run uses the server's model: one Bash call (an approval), then a reply.
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'touch made.txt' } }] }, { text: 'made it' }] }));
    store = await openSqliteStore(join(dir, 'sage.db'));
    driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true, defaultModel: `scripted:${script}` });
    for (const name of Object.keys(secrets) as Name[]) peers.set(name, await startFakeWebhookPeer({ secret: secrets[name] }));
    const config: Record<string, unknown> = {};
    const env: Record<string, string> = {};
    for (const [name, peer] of peers) {
      const variable = `SECRET_${name.replace(':', '_').toUpperCase()}`;
      env[variable] = secrets[name];
      config[name] = { secretEnv: variable, outboundUrl: peer.url, approvers: [alice.senderId] };
    }
    running = (await startChannels({ store, driver, config, factories: [webhookChannel], env, log: silent }))!;
  });
  afterAll(async () => {
    await running?.stop();
    for (const peer of peers.values()) await peer.close();
    await driver?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const route = (path: string): ChannelRoute => running.routes.find((r) => r.path === path)!;
  const post = (path: string, secret: string, body: object) => {
    const raw = JSON.stringify(body);
    return route(path).handle(new Request(`http://sage${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...webhookSignatureHeaders(secret, raw, Date.now()) }, body: raw }));
  };
  const says = async (name: Name, path: string, chatId: string, text: string, extra: object = {}) => {
    const res = await post(path, secrets[name], { chatId, senderId: alice.senderId, senderName: alice.senderName, text, ...extra });
    expect(res.status).toBe(200);
    return (await res.json()) as { handled: string; notice?: string };
  };
  const promptIn = (name: Name, chatId: string) => eventually(() => peers.get(name)!.lastMessages(chatId).find((m) => m.buttons.length > 0), 15_000);
  const runOf = async (channel: string, chatId: string): Promise<RunRecord> => eventually(async () => (await store.listRuns({ sessionId: `${channel}:${chatId}`, limit: 1 }))[0], 15_000);

  test('each instance has its own route, named in the start-up lines; the bare kind keeps /channels/webhook', () => {
    expect(running.routes.map((r) => `${r.method} ${r.path}`).sort()).toEqual(['POST /channels/webhook', 'POST /channels/webhook/a', 'POST /channels/webhook/b']);
    expect(running.connected).toEqual(
      expect.arrayContaining([expect.stringMatching(/^webhook: inbound POST \/channels\/webhook, /), expect.stringMatching(/^webhook:a: inbound POST \/channels\/webhook\/a, /), expect.stringMatching(/^webhook:b: inbound POST \/channels\/webhook\/b, /)]),
    );
  });

  test("a body signed with one instance's secret is refused by another's route (401), and by the bare route", async () => {
    expect((await post('/channels/webhook/b', secrets['webhook:a'], { chatId: '7001', senderId: alice.senderId, text: 'hello' })).status).toBe(401);
    expect((await post('/channels/webhook', secrets['webhook:a'], { chatId: '7001', senderId: alice.senderId, text: 'hello' })).status).toBe(401);
    expect(await store.listRuns({ sessionId: 'webhook:b:7001' })).toEqual([]);
  });

  test("the same chat id in two instances is two sessions; an approval raised in one is not answerable from the other, even by a tap with its short id; the answer names the instance", async () => {
    await says('webhook:a', '/channels/webhook/a', '7002', 'please make the file');
    await says('webhook:b', '/channels/webhook/b', '7002', 'please make the file');
    const promptA = await promptIn('webhook:a', '7002');
    const promptB = await promptIn('webhook:b', '7002');
    const runA = await runOf('webhook:a', '7002');
    const runB = await runOf('webhook:b', '7002');
    expect(runA.id).not.toBe(runB.id);
    expect([runA.channel, runA.options['origin']]).toEqual(['webhook:a', expect.objectContaining({ surface: 'chat', channel: 'webhook:a', chatId: '7002' })]);
    expect(runB.channel).toBe('webhook:b');

    // A tap routed to webhook:b carrying webhook:a's command (same chat id, same short id): not found there.
    const onceA = promptA.buttons.find((b) => b.command.endsWith(' once'))!.command;
    const shortA = /\/approve (\S+)/.exec(onceA)![1]!;
    const crossed = await says('webhook:b', '/channels/webhook/b', '7002', onceA, { messageId: promptB.messageId });
    expect(crossed.handled).toBe('notice');
    expect(crossed.notice).toContain(`No ask "${shortA}" waits`);
    // Typed, too.
    await says('webhook:b', '/channels/webhook/b', '7002', `/approve ${shortA} deny`);
    const askA = (await store.listInteractions({ runId: runA.id, status: ['pending'] })).find((i) => i.kind === 'confirm');
    expect(askA?.status).toBe('pending');
    expect(peers.get('webhook:a')!.lastMessages('7002').filter((m) => m.edited)).toEqual([]);

    // In its own instance the tap decides it, and the outcome and the record name webhook:a.
    const tapped = await says('webhook:a', '/channels/webhook/a', '7002', onceA, { messageId: promptA.messageId });
    expect(tapped.handled).toBe('approval');
    const edited = await eventually(() => peers.get('webhook:a')!.lastMessages('7002').find((m) => m.edited && m.text.includes('Approved')), 15_000);
    expect(edited.text).toMatch(/Approved by alice in webhook:a at \d\d:\d\d UTC/);
    const answered = (await store.listInteractions({ runId: runA.id })).find((i) => i.kind === 'confirm')!;
    expect(answered.response).toMatchObject({ channel: 'webhook:a', userId: `webhook:a:${alice.senderId}` });
    const audit = await eventually(async () => (await store.listAudit({ runId: runA.id })).find((e) => e.data?.['kind'] === 'answer'), 15_000);
    expect(audit.data).toMatchObject({ answeredBy: `webhook:a:${alice.senderId}`, channel: 'webhook:a' });
    await eventually(() => peers.get('webhook:a')!.lastMessages('7002').find((m) => m.text === 'made it'), 15_000);
    // webhook:b's approval still waits, untouched by all of this.
    expect((await store.listInteractions({ runId: runB.id, status: ['pending'] })).filter((i) => i.kind === 'confirm')).toHaveLength(1);
  });

  test("an answer in the web page updates the chat of the instance the ask came from, and no other", async () => {
    await says('webhook:b', '/channels/webhook/b', '7004', 'please make the file');
    await says('webhook:a', '/channels/webhook/a', '7004', 'please make the file');
    await promptIn('webhook:b', '7004');
    await promptIn('webhook:a', '7004');
    const runB = await runOf('webhook:b', '7004');
    const askB = await eventually(async () => (await store.listInteractions({ runId: runB.id, status: ['pending'] })).find((i) => i.kind === 'confirm'), 15_000);
    await driver.runner.respond(askB.id, { kind: 'confirm', confirmed: false, message: 'not today', userId: 'carol', channel: 'web' });
    const edited = await eventually(() => peers.get('webhook:b')!.lastMessages('7004').find((m) => m.edited), 15_000);
    expect(edited.text).toMatch(/Denied by carol in the web page at \d\d:\d\d UTC: not today/);
    expect(peers.get('webhook:a')!.lastMessages('7004').some((m) => m.edited || m.text.includes('carol'))).toBe(false);
  });

  test('a message queued while the run works is kept under the instance (chat_queue channel and session key)', async () => {
    await says('webhook:b', '/channels/webhook/b', '7003', 'please make the file');
    await promptIn('webhook:b', '7003');
    await says('webhook:b', '/channels/webhook/b', '7003', 'and then tell me');
    const queued = await store.listChatQueue({ sessionKey: 'webhook:b:7003' });
    expect(queued.map((q) => [q.sessionKey, q.message['channel'], q.message['text']])).toEqual([['webhook:b:7003', 'webhook:b', 'and then tell me']]);
    expect(await store.listChatQueue({ sessionKey: 'webhook:a:7003' })).toEqual([]);
  });
});

describe('two Slack workspaces (slack:A, slack:B) on one hub', { timeout: 60_000 }, () => {
  let dir: string;
  let store: Store;
  let driver: DurableRunDriver;
  let hub: ChannelHub;
  let slackA: ChannelTestHarness;
  let slackB: ChannelTestHarness;
  let model = '';

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-slack-instances-')));
    store = await openSqliteStore(join(dir, 'sage.db'));
    driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
    slackA = await makeSlackHarness();
    slackB = await makeSlackHarness();
    const common = channelCommonConfigSchema.parse({ approvers: [alice.senderId] });
    const adapterB = slackB.makeAdapter(common, 'slack:B');
    hub = new ChannelHub({
      ...hubOverDriver(store, driver, () => model, dir),
      channels: [
        { adapter: slackA.makeAdapter(common, 'slack:A'), config: common },
        { adapter: adapterB, config: common },
      ],
      log: silent,
    });
    await hub.start();
  });
  afterAll(async () => {
    await hub?.stop();
    await slackA?.close();
    await slackB?.close();
    await driver?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a tap in slack:B on a button carrying slack:A's approval (same chat id, same short id) answers nothing; in slack:A it approves, named slack:A", async () => {
    const file = join(dir, 'slack-a.txt');
    const chatId = '5101';
    model = (() => {
      const script = join(dir, 'slack-script.json');
      writeFileSync(script, JSON.stringify({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: `touch ${file}` } }] }, { text: 'done in A' }] }));
      return `scripted:${script}`;
    })();
    await slackA.userSays(chatId, 'please make the file', alice);
    const prompt = await eventually(() => slackA.lastMessages(chatId).find((m) => m.buttons.length > 0), 15_000);
    const shortId = /\/approve (\S+)/.exec(prompt.buttons[0]!.command)![1]!;
    const [run] = await store.listRuns({ sessionId: `slack:A:${chatId}`, limit: 1 });
    expect(run?.channel).toBe('slack:A');

    // slack:B's bot shows a message in its own chat 5101 with the very same buttons, and alice (an
    // approver there too) taps "once" on it: the tap reaches the hub as slack:B and finds nothing.
    await hub.bus.publishOutbound('slack:B', {
      chatId,
      text: prompt.text,
      approval: { interactionId: 'x', shortId, kind: 'approval', title: 'copied', options: prompt.buttons.map((b) => ({ value: b.command.split(' ')[2]!, label: b.label, command: b.command })) },
    });
    await eventually(() => slackB.lastMessages(chatId).find((m) => m.buttons.length > 0), 15_000);
    await slackB.userTaps(shortId, 'once', alice);
    await slackB.userSays(chatId, `/approve ${shortId} once`, alice);
    await eventually(() => slackB.lastMessages(chatId).find((m) => m.text.includes(`No ask "${shortId}" waits`)), 15_000);
    const pending = (await store.listInteractions({ runId: run!.id, status: ['pending'] })).filter((i) => i.kind === 'confirm');
    expect(pending).toHaveLength(1);
    expect(slackA.lastMessages(chatId).some((m) => m.edited)).toBe(false);

    await slackA.userTaps(shortId, 'once', alice);
    const edited = await eventually(() => slackA.lastMessages(chatId).find((m) => m.edited), 15_000);
    expect(edited.text).toMatch(/Approved by alice in slack:A at/);
    await eventually(() => slackA.lastMessages(chatId).find((m) => m.text.includes('done in A')), 15_000);
    expect(slackB.lastMessages(chatId).some((m) => m.text.includes('done in A') || m.text.includes('Approved by'))).toBe(false);
  });
});
