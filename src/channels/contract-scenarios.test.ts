import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunDriver } from '../server/durable-driver.js';
import { startServer, type RunningServer } from '../server/server.js';
import { eventually, TOKENS } from '../server/test-support/harness.js';
import { openSqliteStore } from '../store/open-store.js';
import type { InteractionRecord, RunRecord, Store } from '../store/index.js';
import { channelCommonConfigSchema, type ChannelAdapter, type InboundMessage, type InboundResult } from './adapter.js';
import { makeFeishuHarness } from './feishu/test-support/harness.js';
import { ChannelHub } from './hub.js';
import { hubOverDriver } from './test-support/hub-over-driver.js';
import { makeSlackHarness } from './slack/test-support/harness.js';
import { makeTelegramHarness } from './telegram/test-support/harness.js';
import type { ChannelTestHarness, MakeChannelHarness, SeenMessage } from './test-harness.js';
import { startFakeWebhookPeer } from './webhook/test-support/fake-webhook-peer.js';
import { makeWhatsappHarness } from './whatsapp/test-support/harness.js';

/**
 * The chat scenarios beyond the basic contract (contract.test.ts), over every adapter's
 * loopback fake with the real hub, server, driver and SQLite store: double taps, taps after
 * expiry, a timeout told apart from a denial, a restart while an approval waits, payload limits,
 * /status, /stop, /new, messages queued while the run works, and who answered where in the audit.
 *
 * Every chat here is a one-to-one chat (the chat id is the person's id), so WhatsApp, whose Cloud
 * API chats are always one-to-one, runs the same scenarios as the others.
 */
const silent = { info() {}, warn() {}, error() {}, debug() {} };
/** Every person a test invents is an approver (a fresh id per test keeps the chats apart). */
const approvers = Array.from({ length: 400 }, (_, i) => String(7001 + i));

const platforms: Array<[string, MakeChannelHarness]> = [
  ['webhook', startFakeWebhookPeer],
  ['slack', makeSlackHarness],
  ['feishu', makeFeishuHarness],
  ['whatsapp', makeWhatsappHarness],
  ['telegram', makeTelegramHarness],
];

interface Served {
  store: Store;
  driver: DurableRunDriver;
  server: RunningServer;
  hub: ChannelHub;
}

describe.each(platforms)('chat scenarios: %s', (kind, makeHarness) => {
  const editsMessages = kind !== 'whatsapp';
  let dir: string;
  let platform: ChannelTestHarness;
  let served: Served;
  let people = 0;
  let scripts = 0;
  /** The approval timeout for the next run (a getter in the hub options reads it). */
  let timeoutMs: number | undefined;
  /** What the core answered each inbound message (a tap's toast), per adapter start. */
  const results: Array<{ message: InboundMessage; result: InboundResult }> = [];

  /** Wraps the adapter's sink so the test sees the notice a tap would show as a toast. */
  function spied(adapter: ChannelAdapter): ChannelAdapter {
    const start = adapter.start.bind(adapter);
    return Object.assign(adapter, {
      start: (sink: (m: InboundMessage) => Promise<InboundResult>) =>
        start(async (message) => {
          const result = await sink(message);
          results.push({ message, result });
          return result;
        }),
    });
  }

  async function boot(): Promise<Served> {
    const store = await openSqliteStore(join(dir, 'sage.db'));
    const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
    const server = await startServer({ store, driver, host: '127.0.0.1', port: 0, tokens: `${TOKENS.carol}=carol:admin`, env: {}, logger: pino({ level: 'silent' }), webRoot: false, closeStore: true });
    const common = channelCommonConfigSchema.parse({ approvers });
    const hub = new ChannelHub({
      ...hubOverDriver(store, driver, () => model, dir),
      channels: [{ adapter: spied(platform.makeAdapter(common)), config: common }],
      log: silent,
      get interactionTimeoutMs() {
        return timeoutMs;
      },
    });
    await hub.start();
    return { store, driver, server, hub };
  }

  async function shutdown(s: Served): Promise<void> {
    await s.hub.stop();
    await s.server.close();
  }

  let model: string;
  function script(turns: unknown[]): string {
    const file = join(dir, `script-${++scripts}.json`);
    writeFileSync(file, JSON.stringify({ turns }));
    return `scripted:${file}`;
  }

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), `sage-chat-${kind}-`)));
    platform = await makeHarness();
    served = await boot();
  });
  afterAll(async () => {
    if (served) await shutdown(served);
    await platform?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const person = (name = 'alice') => ({ senderId: approvers[people++]!, senderName: name });
  const messages = (chatId: string): SeenMessage[] => platform.lastMessages(chatId);
  const noticeFor = (senderId: string) => results.filter((r) => r.message.senderId === senderId).at(-1)?.result;

  async function runOf(chatId: string): Promise<RunRecord> {
    return eventually(async () => (await served.store.listRuns({ limit: 1000 })).find((r) => (r.options['origin'] as { chatId?: string } | undefined)?.chatId === chatId), 15_000);
  }

  async function waiting(runId: string): Promise<InteractionRecord> {
    return eventually(async () => (await served.store.listInteractions({ runId, status: ['pending'] })).find((i) => i.kind === 'confirm'), 15_000);
  }

  /** A chat whose first message starts a run that wants to create `file` (Bash), then says `done`. */
  async function chatWithApproval(options: { command?: string; after?: unknown[]; text?: string } = {}) {
    const who = person();
    const chatId = who.senderId;
    const file = join(dir, `${kind}-${chatId}.txt`);
    model = script([{ toolCalls: [{ name: 'Bash', input: { command: options.command ?? `touch ${file}` } }] }, { text: `done ${chatId}` }, ...(options.after ?? [])]);
    await platform.userSays(chatId, options.text ?? 'please make the file', who);
    const prompt = await eventually(() => messages(chatId).find((m) => m.buttons.length > 0), 15_000);
    const shortId = /\/approve (\S+)/.exec(prompt.buttons[0]!.command)![1]!;
    const run = await runOf(chatId);
    return { who, chatId, file, shortId, prompt, run, ask: await waiting(run.id) };
  }

  /** The approval's message shows `pattern` and no buttons (a new quoting message on WhatsApp, which cannot edit). */
  async function promptSays(chatId: string, pattern: RegExp): Promise<SeenMessage> {
    return eventually(() => messages(chatId).find((m) => pattern.test(m.text) && m.buttons.length === 0 && (!editsMessages || m.edited)), 15_000);
  }

  async function expire(interactionId: string): Promise<void> {
    await eventually(async () => {
      await served.driver.runner.expireDue();
      return (await served.store.getInteraction(interactionId))?.status === 'expired' ? true : undefined;
    }, 15_000);
  }

  test('double tap: two approvers tap at once; one decides, the other is told who already answered, nothing runs twice', async () => {
    const { chatId, file, shortId, run, ask, who } = await chatWithApproval();
    const bob = person('bob');
    // Some platforms acknowledge a tap before the core has handled it (Slack's ack() comes first):
    // wait for what the core answered each tap, not only for the platform's acknowledgement.
    const taps = (p: { senderId: string }) => results.filter((r) => r.message.senderId === p.senderId && r.message.text.startsWith('/approve'));
    await Promise.all([platform.userTaps(shortId, 'once', who), platform.userTaps(shortId, 'deny', bob)]);
    await eventually(() => (taps(who).length === 1 && taps(bob).length === 1 ? true : undefined), 15_000);
    const record = (await served.store.getInteraction(ask.id))!;
    expect(record.status).toBe('answered');
    // Recorded as each sender's principal, `<channel>:<senderId>`.
    const winner = record.answeredBy === `${kind}:${who.senderId}` ? who : bob;
    const loser = winner === who ? bob : who;
    expect([`${kind}:${who.senderId}`, `${kind}:${bob.senderId}`]).toContain(record.answeredBy);
    expect(taps(loser)[0]!.result.notice).toMatch(new RegExp(`no longer open: (approved|denied) by (${winner.senderName}|${winner.senderId}) in ${kind}`));
    // A third, late tap changes nothing either.
    await platform.userTaps(shortId, 'deny', who);
    await eventually(() => (taps(who).length === 2 ? true : undefined), 15_000);
    expect(taps(who)[1]!.result.notice).toMatch(/no longer open/);
    const after = (await served.store.getInteraction(ask.id))!;
    expect(after.answeredAt).toBe(record.answeredAt);
    expect(after.response).toEqual(record.response);
    await eventually(async () => ((await served.store.getRun(run.id))?.status === 'idle' ? true : undefined), 15_000);
    const ran = (await served.store.readEvents(run.id)).filter((e) => e.type === 'tool.completed');
    // The call completed once: run by the approval, or refused by the denial.
    expect(ran.length).toBe(1);
    expect(existsSync(file)).toBe(winner === who);
    await promptSays(chatId, new RegExp(winner === who ? `Approved by (alice|${who.senderId})` : `Denied by (bob|${bob.senderId})`));
  });

  test('a tap after the request expired: "expired", nothing runs, the buttons are gone', async () => {
    timeoutMs = 300;
    try {
      const { chatId, file, shortId, ask, who } = await chatWithApproval();
      await expire(ask.id);
      await eventually(() => messages(chatId).find((m) => /Expired at/.test(m.text) && !m.buttons.length), 15_000);
      await platform.userTaps(shortId, 'once', who);
      expect(noticeFor(who.senderId)?.notice).toMatch(/no longer open: expired/);
      expect((await served.store.getInteraction(ask.id))!.status).toBe('expired');
      expect(existsSync(file)).toBe(false);
      if (editsMessages) await promptSays(chatId, /Expired at/);
    } finally {
      timeoutMs = undefined;
    }
  });

  test('a timeout is told apart from a denial: in the chat, to the model and in the audit', async () => {
    timeoutMs = 300;
    let timedOut: Awaited<ReturnType<typeof chatWithApproval>>;
    try {
      timedOut = await chatWithApproval();
    } finally {
      timeoutMs = undefined;
    }
    const denied = await chatWithApproval();
    await platform.userSays(denied.chatId, `/approve ${denied.shortId} deny not now`, denied.who);
    await expire(timedOut.ask.id);

    const expiredText = await eventually(() => messages(timedOut.chatId).find((m) => /Expired at/.test(m.text))?.text, 15_000);
    expect(expiredText).toMatch(/timed out, not that it was denied/);
    expect(messages(timedOut.chatId).some((m) => /Denied/.test(m.text))).toBe(false);
    await promptSays(denied.chatId, new RegExp(`❌ Denied by (alice|${denied.who.senderId}) in ${kind} at \\d\\d:\\d\\d UTC: not now`));
    expect(messages(denied.chatId).some((m) => /Expired/.test(m.text))).toBe(false);

    // The model reads "timed out" for one and the person's reason for the other.
    const toolText = async (runId: string) => JSON.stringify((await eventually(async () => (await served.store.readEvents(runId)).find((e) => e.type === 'tool.completed'), 15_000)).data);
    expect(await toolText(timedOut.run.id)).toMatch(/no one answered within .* not a denial/);
    expect(await toolText(denied.run.id)).toMatch(/not now/);
    const answers = async (runId: string) => (await served.store.listAudit({ runId })).filter((e) => e.data?.['kind'] === 'answer');
    expect((await eventually(async () => (await answers(timedOut.run.id))[0]))?.data?.['answer']).toBe('timedOut');
    expect((await eventually(async () => (await answers(denied.run.id))[0]))?.data?.['answer']).toBe('rejected');
  });

  test('restart while waiting: the server stops with the approval pending; after a start over the same SQLite file the tap decides it', async () => {
    const { chatId, file, shortId, run, who } = await chatWithApproval();
    await shutdown(served);
    expect((await (served = await boot()).store.getRun(run.id))?.status).toBe('suspended');
    await platform.userTaps(shortId, 'once', who);
    expect(noticeFor(who.senderId)).toMatchObject({ handled: 'approval' });
    await eventually(() => (existsSync(file) ? true : undefined), 15_000);
    await eventually(() => messages(chatId).find((m) => m.text.includes(`done ${chatId}`)), 15_000);
    await promptSays(chatId, new RegExp(`Approved by (alice|${who.senderId}) in ${kind}`));
    // Only the first prompt ever had buttons, and it has none now (answered after the restart).
    if (editsMessages) expect(messages(chatId).filter((m) => m.buttons.length > 0)).toEqual([]);
  });

  test('closed while the server was down: a tap on the old prompt after the start is told how it ended, and its buttons go', async () => {
    const { chatId, file, shortId, ask, who } = await chatWithApproval();
    await shutdown(served);
    const offline = await openSqliteStore(join(dir, 'sage.db'));
    expect(await offline.closeInteraction(ask.id, 'expired', 'no answer in time')).toBe(true);
    await offline.close();
    served = await boot();
    await platform.userTaps(shortId, 'once', who);
    expect(noticeFor(who.senderId)?.notice).toMatch(/no longer open: expired/);
    expect(existsSync(file)).toBe(false);
    if (editsMessages) await promptSays(chatId, /Expired at/);
  });

  test('a bare "yes" answers the only approval waiting; a typed /approve takes a short prefix of the id', async () => {
    const first = await chatWithApproval();
    await platform.userSays(first.chatId, 'yes', first.who);
    await eventually(() => (existsSync(first.file) ? true : undefined), 15_000);
    const second = await chatWithApproval();
    await platform.userSays(second.chatId, `/approve ${second.shortId.slice(0, 4)} once`, second.who);
    await eventually(() => (existsSync(second.file) ? true : undefined), 15_000);
    expect((await served.store.getInteraction(second.ask.id))!.response).toMatchObject({ confirmed: true, channel: kind, userId: `${kind}:${second.who.senderId}` });
  });

  test('payload limits: a huge command is shown truncated and still answerable; a huge reply arrives whole, split to the platform limit', async () => {
    const huge = 'x'.repeat(60_000);
    const reply = Array.from({ length: 3_000 }, (_, i) => `line ${i} of the long answer`).join('\n');
    const who = person();
    const chatId = who.senderId;
    const file = join(dir, `${kind}-${chatId}.txt`);
    model = script([{ toolCalls: [{ name: 'Bash', input: { command: `touch ${file} # ${huge}` } }] }, { text: reply }]);
    const task = `please read this: ${'y'.repeat(15_000)}`;
    await platform.userSays(chatId, task, who);
    const prompt = await eventually(() => messages(chatId).find((m) => m.buttons.length > 0), 15_000);
    // The prompt (on WhatsApp, the text before its buttons message) shows the command cut short.
    const shown = messages(chatId).find((m) => m.text.includes(`touch ${file}`))!;
    expect(shown.text.length).toBeLessThan(4_000);
    expect(shown.text).toContain('…');
    const run = await runOf(chatId);
    expect(run.task).toBe(task);
    await platform.userTaps(/\/approve (\S+)/.exec(prompt.buttons[0]!.command)![1]!, 'once', who);
    await eventually(() => (existsSync(file) ? true : undefined), 15_000);
    // Every line of the reply reaches the chat, in order, in messages no longer than the platform allows.
    const parts = await eventually(() => {
      const got = messages(chatId).filter((m) => m.text.includes('of the long answer'));
      return got.map((m) => m.text).join('\n').includes('line 2999 of the long answer') ? got : undefined;
    }, 15_000);
    const limit = { slack: 40_000, feishu: 8_000, whatsapp: 4_096, telegram: 4_096 }[kind];
    if (limit) for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(limit);
    expect(parts.map((m) => m.text).join('\n')).toBe(reply);
  });

  test('/status lists what waits; /stop cancels the run and closes its asks', async () => {
    const { chatId, file, shortId, run, ask, who } = await chatWithApproval();
    await platform.userSays(chatId, '/status', who);
    const status = await eventually(() => messages(chatId).find((m) => m.text.startsWith(`Run ${run.id}`)), 15_000);
    expect(status.text).toContain('Waiting for an answer');
    expect(status.text).toContain(shortId);
    await platform.userSays(chatId, '/stop', who);
    await eventually(async () => ((await served.store.getRun(run.id))?.status === 'cancelled' ? true : undefined), 15_000);
    expect((await served.store.getInteraction(ask.id))!.status).toBe('cancelled');
    await promptSays(chatId, /Cancelled/);
    await platform.userSays(chatId, '/status', who);
    await eventually(() => messages(chatId).find((m) => m.text.startsWith('No run in this chat.') && m.text.includes('Nothing waits')), 15_000);
    await platform.userTaps(shortId, 'once', who);
    expect(noticeFor(who.senderId)?.notice).toMatch(/no longer open: cancelled/i);
    expect(existsSync(file)).toBe(false);
  });

  test('/new ends the idle run; the next message starts a new one', async () => {
    const who = person();
    const chatId = who.senderId;
    model = script([{ text: 'first answer' }, { text: 'never read' }]);
    await platform.userSays(chatId, 'hello', who);
    await eventually(() => messages(chatId).find((m) => m.text === 'first answer'), 15_000);
    const first = await runOf(chatId);
    await eventually(async () => ((await served.store.getRun(first.id))?.status === 'idle' ? true : undefined), 15_000);
    await platform.userSays(chatId, '/new', who);
    await eventually(() => messages(chatId).find((m) => m.text.startsWith('Starting over')), 15_000);
    await eventually(async () => ((await served.store.getRun(first.id))?.status === 'completed' ? true : undefined), 15_000);
    model = script([{ text: 'second run here' }]);
    await platform.userSays(chatId, 'again', who);
    await eventually(() => messages(chatId).find((m) => m.text === 'second run here'), 15_000);
    const runs = (await served.store.listRuns({ limit: 1000 })).filter((r) => (r.options['origin'] as { chatId?: string } | undefined)?.chatId === chatId);
    expect(runs.map((r) => r.task).sort()).toEqual(['again', 'hello']);
  });

  test('messages sent while the run works are queued and reach the run in order, none dropped', async () => {
    const { chatId, shortId, run, who } = await chatWithApproval({ after: [{ text: 'read them all' }, { text: 'bye' }] });
    for (const text of ['one', 'two', 'three']) await platform.userSays(chatId, text, who);
    expect(messages(chatId).filter((m) => m.text.startsWith('Queued:')).length).toBe(1);
    await platform.userTaps(shortId, 'once', who);
    await eventually(() => messages(chatId).find((m) => m.text === 'read them all'), 15_000);
    const delivered = (await served.store.listInteractions({ runId: run.id })).filter((i) => i.kind === 'input' && i.status === 'answered');
    expect(delivered.map((i) => (i.response as { text?: string }).text)).toEqual(['one\n\ntwo\n\nthree']);
  });

  test('a message queued when the server stops reaches the run after the restart, once', async () => {
    const { chatId, shortId, run, who } = await chatWithApproval({ after: [{ text: 'got it after the restart' }] });
    await platform.userSays(chatId, 'and also this', who);
    expect(messages(chatId).filter((m) => m.text.startsWith('Queued:')).length).toBe(1);
    await shutdown(served);
    served = await boot();
    expect(messages(chatId).some((m) => /did not reach the agent|send them again/.test(m.text))).toBe(false);
    await platform.userTaps(shortId, 'once', who);
    await eventually(() => messages(chatId).find((m) => m.text === 'got it after the restart'), 15_000);
    const delivered = (await served.store.listInteractions({ runId: run.id })).filter((i) => i.kind === 'input' && i.status === 'answered');
    expect(delivered.map((i) => (i.response as { text?: string }).text)).toEqual(['and also this']);
    expect(await served.store.listChatQueue({ sessionKey: `${kind}:${chatId}` })).toEqual([]);
  });

  test('the audit records who answered in which channel (GET /audit)', async () => {
    const { shortId, run, who } = await chatWithApproval();
    await platform.userTaps(shortId, 'once', who);
    const entry = await eventually(async () => {
      const res = await fetch(`${served.server.url}/audit?runId=${encodeURIComponent(run.id)}`, { headers: { authorization: `Bearer ${TOKENS.carol}` } });
      const body = (await res.json()) as { entries: Array<{ userId: string; behavior: string; data: Record<string, unknown> }> };
      return body.entries.find((e) => e.data['kind'] === 'answer');
    }, 15_000);
    const principal = `${kind}:${who.senderId}`;
    expect(entry).toMatchObject({ userId: principal, behavior: 'allow', data: { answer: 'approved', answeredBy: principal, channel: kind } });
    const answered = (await served.store.listInteractions({ runId: run.id })).find((i) => i.kind === 'confirm')!;
    expect(answered.response).toMatchObject({ channel: kind, userId: principal });
  });
});
