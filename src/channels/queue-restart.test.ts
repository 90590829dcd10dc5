import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunDriver } from '../server/durable-driver.js';
import { eventually } from '../server/test-support/harness.js';
import { openSqliteStore } from '../store/open-store.js';
import type { InteractionRecord, RunRecord, Store } from '../store/index.js';
import { channelCommonConfigSchema } from './adapter.js';
import { ChannelHub } from './hub.js';
import { hubOverDriver } from './test-support/hub-over-driver.js';
import type { ChannelTestHarness, ChatUser } from './test-harness.js';
import { startFakeWebhookPeer } from './webhook/test-support/fake-webhook-peer.js';

/**
 * The chat queue across restarts and crashes, over the webhook adapter's loopback peer with the
 * real hub, durable driver and SQLite store. A crash is played by stopping the server and writing
 * to the store what the crashed process had committed (a message queued, a handover reserved, an
 * answer given) before the next start over the same file.
 */
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const approvers = Array.from({ length: 50 }, (_, i) => String(8001 + i));

interface Served {
  store: Store;
  driver: DurableRunDriver;
  hub: ChannelHub;
}

describe('chat queue across restarts (webhook)', () => {
  let dir: string;
  let platform: ChannelTestHarness;
  let served: Served | undefined;
  let people = 0;
  let scripts = 0;
  let model = '';

  async function boot(): Promise<Served> {
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
    const common = channelCommonConfigSchema.parse({ approvers });
    const hub = new ChannelHub({
      ...hubOverDriver(store, driver, () => model, dir),
      channels: [{ adapter: platform.makeAdapter(common), config: common }],
      log: silent,
    });
    await hub.start();
    return { store, driver, hub };
  }

  async function shutdown(): Promise<void> {
    if (!served) return;
    const s = served;
    served = undefined;
    await s.hub.stop();
    await s.driver.close();
    await s.store.close();
  }

  /** What a crashed process had committed: written with the server down, over the same file. */
  async function offline<T>(fn: (store: Store) => Promise<T>): Promise<T> {
    const store = await openSqliteStore(join(dir, 'sage.db'));
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  function script(turns: unknown[]): string {
    const file = join(dir, `script-${++scripts}.json`);
    writeFileSync(file, JSON.stringify({ turns }));
    return `scripted:${file}`;
  }

  const live = () => served!;
  const texts = (chatId: string) => platform.lastMessages(chatId).map((m) => m.text);
  const message = (chatId: string, who: ChatUser, text: string) => ({ channel: 'webhook', chatId, senderId: who.senderId, text });

  async function nextMessageAsk(runId: string): Promise<InteractionRecord> {
    return eventually(async () => (await live().store.listInteractions({ runId, status: ['pending'] })).find((i) => i.kind === 'input'), 15_000);
  }

  async function deliveredTexts(runId: string): Promise<string[]> {
    const answered = (await live().store.listInteractions({ runId })).filter((i) => i.kind === 'input' && i.status === 'answered');
    // In the order the run asked.
    answered.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
    return answered.map((i) => String((i.response as { text?: unknown }).text));
  }

  /** A chat whose run answered its first message and now waits (idle) for the next one. */
  async function idleChat(turns: unknown[]): Promise<{ who: ChatUser; chatId: string; run: RunRecord; ask: InteractionRecord }> {
    const who = { senderId: approvers[people++]!, senderName: 'alice' };
    const chatId = who.senderId;
    model = script([{ text: `first answer ${chatId}` }, ...turns]);
    await platform.userSays(chatId, 'hello', who);
    await eventually(() => texts(chatId).find((t) => t === `first answer ${chatId}`), 15_000);
    const run = await eventually(async () => (await live().store.listRuns({ sessionId: `webhook:${chatId}`, limit: 1 }))[0], 15_000);
    const ask = await nextMessageAsk(run.id);
    return { who, chatId, run, ask };
  }

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-chat-queue-')));
    platform = await startFakeWebhookPeer();
    served = await boot();
  });
  afterAll(async () => {
    await shutdown();
    await platform?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('queued while the hub was stopping, the run idle at the next start: the start hands the message over', async () => {
    const { who, chatId, run } = await idleChat([{ text: 'read what you queued' }]);
    await shutdown();
    // The hub stopped listening before it saw the run's next-message ask; the message was committed.
    await offline((store) => store.queueChatMessage(`webhook:${chatId}`, message(chatId, who, 'sent while it worked')));
    served = await boot();
    await eventually(() => texts(chatId).find((t) => t === 'read what you queued'), 15_000);
    expect(await deliveredTexts(run.id)).toEqual(['sent while it worked']);
    expect(await live().store.listChatQueue({ sessionKey: `webhook:${chatId}` })).toEqual([]);
  });

  test('a crash after the reservation, before the answer: the next start delivers the messages, once', async () => {
    const { who, chatId, run, ask } = await idleChat([{ text: 'got both' }]);
    await shutdown();
    await offline(async (store) => {
      await store.queueChatMessage(`webhook:${chatId}`, message(chatId, who, 'one'));
      await store.queueChatMessage(`webhook:${chatId}`, message(chatId, who, 'two'));
      await store.reserveChatQueue(`webhook:${chatId}`, `ask:${ask.id}`);
    });
    served = await boot();
    await eventually(() => texts(chatId).find((t) => t === 'got both'), 15_000);
    expect(await deliveredTexts(run.id)).toEqual(['one\n\ntwo']);
    expect(await live().store.listChatQueue({ sessionKey: `webhook:${chatId}` })).toEqual([]);
  });

  test('a crash after the answer, before the removal: the next start removes the messages and does not send them again', async () => {
    const { who, chatId, run, ask } = await idleChat([{ text: 'read it once' }, { text: 'and the next one' }]);
    await shutdown();
    await offline(async (store) => {
      await store.queueChatMessage(`webhook:${chatId}`, message(chatId, who, 'only once'));
      await store.reserveChatQueue(`webhook:${chatId}`, `ask:${ask.id}`);
      await store.claimAnswer(ask.id, { requestId: ask.id, kind: 'input', text: 'only once', userId: who.senderId, respondedAt: new Date().toISOString() });
    });
    served = await boot();
    expect(await live().store.listChatQueue({ sessionKey: `webhook:${chatId}` })).toEqual([]);
    // The start resumed the run with the stored answer; it asks again, and a new message goes alone.
    await eventually(() => texts(chatId).find((t) => t === 'read it once'), 15_000);
    await eventually(async () => ((await live().store.listInteractions({ runId: run.id, status: ['pending'] })).some((i) => i.kind === 'input') ? true : undefined), 15_000);
    await platform.userSays(chatId, 'something new', who);
    await eventually(() => texts(chatId).find((t) => t === 'and the next one'), 15_000);
    expect(await deliveredTexts(run.id)).toEqual(['only once', 'something new']);
  });

  test('a crash while a new run was being started for queued messages: not started → they go with the next message; started → removed', async () => {
    const { who, chatId, run } = await idleChat([]);
    await live().driver.runner.cancel(run.id, 'ended elsewhere');
    await eventually(async () => ((await live().store.getRun(run.id))?.status === 'cancelled' ? true : undefined), 15_000);
    const started = await idleChat([]);
    await shutdown();
    await offline(async (store) => {
      // This chat's run ended with a message queued; the start of a new run for it never happened.
      await store.queueChatMessage(`webhook:${chatId}`, message(chatId, who, 'queued for the old run'));
      await store.reserveChatQueue(`webhook:${chatId}`, 'run:run_never_created');
      // That chat's new run was created with its message before the crash (its run id is the token).
      await store.queueChatMessage(`webhook:${started.chatId}`, message(started.chatId, started.who, 'hello'));
      await store.reserveChatQueue(`webhook:${started.chatId}`, `run:${started.run.id}`);
    });
    model = script([{ text: 'a new run read both' }]);
    served = await boot();
    expect(await live().store.listChatQueue({ sessionKey: `webhook:${started.chatId}` })).toEqual([]);
    expect((await live().store.listChatQueue({ sessionKey: `webhook:${chatId}` })).map((q) => [q.message['text'], q.reservedFor])).toEqual([['queued for the old run', null]]);
    await platform.userSays(chatId, '/status', who);
    await eventually(() => texts(chatId).find((t) => t.startsWith('No run in this chat. 1 queued message(s)')), 15_000);
    await platform.userSays(chatId, 'and now this', who);
    await eventually(() => texts(chatId).find((t) => t === 'a new run read both'), 15_000);
    const runs = await live().store.listRuns({ sessionId: `webhook:${chatId}`, limit: 10 });
    expect(runs[0]!.task).toBe('queued for the old run\n\nand now this');
    expect(await live().store.listChatQueue({ sessionKey: `webhook:${chatId}` })).toEqual([]);
  });

  test("another server's channel: its handover in progress is left to it", async () => {
    await shutdown();
    await offline(async (store) => {
      await store.queueChatMessage('slack:C1', { channel: 'slack', chatId: 'C1', senderId: 'U1', text: 'not ours' });
      await store.reserveChatQueue('slack:C1', 'ask:run_elsewhere:input:1');
    });
    served = await boot();
    expect((await live().store.listChatQueue({ sessionKey: 'slack:C1' })).map((q) => q.reservedFor)).toEqual(['ask:run_elsewhere:input:1']);
  });

  test('/stop drops what is queued: nothing reaches a later run', async () => {
    const who = { senderId: approvers[people++]!, senderName: 'alice' };
    const chatId = who.senderId;
    // The run waits on an approval (it works, as far as the chat is concerned): messages queue.
    model = script([{ toolCalls: [{ name: 'Bash', input: { command: `touch ${join(dir, `stop-${chatId}`)}` } }] }, { text: 'never' }]);
    await platform.userSays(chatId, 'make a file', who);
    await eventually(() => platform.lastMessages(chatId).find((m) => m.buttons.length > 0), 15_000);
    await platform.userSays(chatId, 'queued then dropped', who);
    expect((await live().store.listChatQueue({ sessionKey: `webhook:${chatId}` })).length).toBe(1);
    await platform.userSays(chatId, '/stop', who);
    expect(await live().store.listChatQueue({ sessionKey: `webhook:${chatId}` })).toEqual([]);
    model = script([{ text: 'fresh start' }]);
    await platform.userSays(chatId, 'new task', who);
    await eventually(() => texts(chatId).find((t) => t === 'fresh start'), 15_000);
    expect((await live().store.listRuns({ sessionId: `webhook:${chatId}`, limit: 1 }))[0]!.task).toBe('new task');
  });
});
