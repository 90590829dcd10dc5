import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { serverGrant } from '../runtime/web-gate.js';
import { eventually, startHarness, type Harness } from '../server/test-support/harness.js';
import { channelCommonConfigSchema } from './adapter.js';
import { makeFeishuHarness } from './feishu/test-support/harness.js';
import { ChannelHub } from './hub.js';
import { makeSlackHarness } from './slack/test-support/harness.js';
import { makeTelegramHarness } from './telegram/test-support/harness.js';
import type { ChannelTestHarness, MakeChannelHarness } from './test-harness.js';
import { startFakeWebhookPeer } from './webhook/test-support/fake-webhook-peer.js';

/**
 * The channel contract, run against every adapter over its loopback fake platform, with the real
 * hub, server driver, factory and store: a chat message starts a run; its approval reaches the chat
 * with buttons; a tap, a typed command or a bare "yes" answers it (only from an approver).
 * WhatsApp is not in this table: a Cloud API chat is one-to-one (the chat is the sender), which the
 * per-test chats here need; its adapter tests cover it over its own fake.
 */
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const alice = { senderId: '1001', senderName: 'alice' };
const mallory = { senderId: '6666', senderName: 'mallory' };

const adapters: Array<[string, MakeChannelHarness]> = [
  ['webhook', startFakeWebhookPeer],
  ['slack', makeSlackHarness],
  ['feishu', makeFeishuHarness],
  ['telegram', makeTelegramHarness],
];

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe.each(adapters)('channel contract: %s', (kind, makeHarness) => {
  let platform: ChannelTestHarness;
  let hub: ChannelHub;
  let n = 0;
  /** The file the next run's Bash call creates, and the model that makes it. */
  let file: string;
  let model: string;

  beforeAll(async () => {
    platform = await makeHarness();
    const common = channelCommonConfigSchema.parse({ approvers: [alice.senderId], allowFrom: [alice.senderId, mallory.senderId] });
    hub = new ChannelHub({
      store: h.store,
      runner: h.driver.runner,
      admitRun: (request) => h.driver.factory.admitRun(request),
      model: () => model,
      cwd: () => h.dir,
      serverGrant: () => serverGrant('user', h.driver.serverPolicy),
      channels: [{ adapter: platform.makeAdapter(common), config: common }],
      log: silent,
    });
    await hub.start();
  });
  afterAll(async () => {
    await hub?.stop();
    await platform?.close();
  });

  /** A new chat whose first message starts a run that wants to touch a file. */
  async function chatWithApproval(): Promise<{ chatId: string; shortId: string }> {
    const chatId = `${5000 + ++n}`;
    file = join(h.dir, `${kind}-${n}.txt`);
    model = h.script([{ toolCalls: [{ name: 'Bash', input: { command: `touch ${file}` } }] }, { text: `made ${kind}-${n}` }]);
    await platform.userSays(chatId, 'please make the file', alice);
    const prompt = await eventually(() => platform.lastMessages(chatId).find((m) => m.buttons.length > 0), 15_000);
    const shortId = /\/approve (\S+)/.exec(prompt.buttons[0]!.command)?.[1];
    expect(shortId).toBeDefined();
    return { chatId, shortId: shortId! };
  }

  test('a tap on "once" approves: the tool runs, the buttons go, the agent\'s answer is posted', async () => {
    const { chatId, shortId } = await chatWithApproval();
    expect(platform.lastMessages(chatId).some((m) => /Bash/.test(m.text))).toBe(true);
    const reads = vi.spyOn(h.store, 'readEvents');
    await platform.userTaps(shortId, 'once', alice);
    await eventually(() => (existsSync(file) ? true : undefined), 15_000);
    const done = await eventually(() => platform.lastMessages(chatId).find((m) => m.text.includes(`made ${kind}-${n}`)), 15_000);
    expect(done).toBeDefined();
    // The agent's answer came with the notification of the commit that wrote it: no read of the log.
    expect(reads).not.toHaveBeenCalled();
    reads.mockRestore();
    const prompt = platform.lastMessages(chatId).find((m) => m.text.includes(shortId) || m.edited);
    expect(prompt?.buttons ?? []).toEqual([]);
  });

  test('a bare "yes" from an approver answers the one approval waiting; from a non-approver it changes nothing', async () => {
    const { chatId } = await chatWithApproval();
    await platform.userSays(chatId, 'yes', mallory);
    expect(existsSync(file)).toBe(false);
    expect((await h.store.listInteractions({ status: ['pending'] })).some((i) => i.kind === 'confirm')).toBe(true);
    await platform.userSays(chatId, 'yes', alice);
    await eventually(() => (existsSync(file) ? true : undefined), 15_000);
  });

  test('a typed deny with a reason: nothing runs and the model reads the reason', async () => {
    const { chatId, shortId } = await chatWithApproval();
    await platform.userSays(chatId, `/approve ${shortId} deny not today`, alice);
    const run = await eventually(async () => (await h.store.listRuns({ limit: 1000 })).find((r) => (r.options['origin'] as { chatId?: string } | undefined)?.chatId === chatId && r.status !== 'running'), 15_000);
    expect(existsSync(file)).toBe(false);
    const events = await h.store.readEvents(run.id);
    expect(JSON.stringify(events)).toContain('not today');
  });

  test('answered in the web page: the chat\'s prompt loses its buttons and says who answered where', async () => {
    const { chatId } = await chatWithApproval();
    const run = await eventually(async () => (await h.store.listRuns({ limit: 1000 })).find((r) => (r.options['origin'] as { chatId?: string; channel?: string } | undefined)?.chatId === chatId && (r.options['origin'] as { channel?: string }).channel === kind));
    const pending = await eventually(async () => (await h.store.listInteractions({ runId: run.id, status: ['pending'] })).find((i) => i.kind === 'confirm'));
    const answered = await h.api('carol', 'POST', `/interactions/${encodeURIComponent(pending.id)}/respond`, { kind: 'confirm', confirmed: true });
    expect(answered.status).toBe(200);
    await eventually(() => (existsSync(file) ? true : undefined), 15_000);
    await eventually(() => (platform.lastMessages(chatId).some((m) => m.text.includes('Approved by carol in the web page') && m.buttons.length === 0) ? true : undefined), 15_000);
  });
});

// A guard that the suite really ran each scenario against a real store (not vacuous).
test('the contract suite writes its runs to the store', async () => {
  writeFileSync(join(h.dir, '.keep'), '');
  expect((await h.store.listRuns({ limit: 1000 })).length).toBeGreaterThan(0);
});
