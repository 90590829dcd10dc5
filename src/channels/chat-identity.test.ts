import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startHarness, type Harness } from '../server/test-support/harness.js';
import { assertRunCapacity, resolveUserLimits } from '../runtime/user-limits.js';
import type { RunRecord } from '../store/index.js';
import { channelCommonConfigSchema } from './adapter.js';
import { ChannelHub } from './hub.js';
import type { ChannelTestHarness, ChatUser } from './test-harness.js';
import { hubOverDriver } from './test-support/hub-over-driver.js';
import { startFakeWebhookPeer } from './webhook/test-support/fake-webhook-peer.js';

/**
 * Who a chat sender is. A run started in a chat belongs to the principal `<channel>:<senderId>`
 * (`webhook:mallory`), never to the server user who happens to have the same name, unless the
 * operator maps the sender to that user (`users`). And every way of answering in a chat checks
 * the approver list, while a sender outside `allowFrom` hears nothing at all.
 *
 * Two webhook instances on one hub: `webhook` (no mapping) and `webhook:team`, which maps the chat
 * sender `alice` to the server user `alice`. The server has web users alice, bob, mallory (users)
 * and carol (admin).
 */
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const alice: ChatUser = { senderId: 'alice', senderName: 'Alice' };
const mallory: ChatUser = { senderId: 'mallory' };
const eve: ChatUser = { senderId: 'eve' };

let h: Harness;
let plain: ChannelTestHarness;
let team: ChannelTestHarness;
let hub: ChannelHub;
let model: string;
let n = 0;
/** The hub's runs-per-user limit, as `sage serve --max-runs-per-user` would set it. */
let maxRuns = 1000;

beforeAll(async () => {
  h = await startHarness();
  plain = await startFakeWebhookPeer();
  team = await startFakeWebhookPeer({ secret: 'team-webhook-secret' });
  const common = channelCommonConfigSchema.parse({ approvers: [alice.senderId], allowFrom: [alice.senderId, mallory.senderId] });
  const mapped = channelCommonConfigSchema.parse({ approvers: [alice.senderId], allowFrom: [alice.senderId, mallory.senderId], users: { alice: 'alice' } });
  hub = new ChannelHub({
    ...hubOverDriver(h.store, h.driver, () => model, h.dir),
    channels: [
      { adapter: plain.makeAdapter(common), config: common },
      { adapter: team.makeAdapter(mapped, 'webhook:team'), config: mapped },
    ],
    log: silent,
    assertRunCapacity: (userId) => assertRunCapacity(h.store, userId, resolveUserLimits({ runsPerUser: maxRuns })),
  });
  await hub.start();
});
afterAll(async () => {
  await hub?.stop();
  await plain?.close();
  await team?.close();
  await h?.close();
});

/** A script whose run wants to create a file (an approval), then says it did. */
function touchScript(): { file: string } {
  const file = join(h.dir, `made-${++n}.txt`);
  model = h.script([{ toolCalls: [{ name: 'Bash', input: { command: `touch ${file}` } }] }, { text: `made ${n}` }]);
  return { file };
}

/** A script whose run asks a question with two options, then says what it was told. */
function questionScript(): void {
  model = h.script([
    { toolCalls: [{ name: 'AskUserQuestion', input: { questions: [{ question: 'Deploy now?', header: 'Deploy', options: [{ label: 'Yes, deploy' }, { label: 'No' }] }] } }] },
    { text: 'deployed' },
  ]);
}

async function runOfChat(channel: string, chatId: string): Promise<RunRecord> {
  return eventually(async () => (await h.store.listRuns({ limit: 1000 })).find((r) => {
    const origin = r.options['origin'] as { chatId?: string; channel?: string } | undefined;
    return origin?.chatId === chatId && origin.channel === channel;
  }), 15_000);
}

async function pendingAsk(runId: string, kind: 'confirm' | 'questions') {
  return eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] })).find((i) => i.kind === kind), 15_000);
}

/** The short id the chat's prompt carries on its first button. */
async function shortIdIn(platform: ChannelTestHarness, chatId: string): Promise<string> {
  const prompt = await eventually(() => platform.lastMessages(chatId).find((m) => m.buttons.length > 0), 15_000);
  return /^\/(?:approve|answer) (\S+)/.exec(prompt.buttons[0]!.command)![1]!;
}

describe('a chat run belongs to the principal <channel>:<senderId>', () => {
  test('mallory starts a run in chat: it is webhook:mallory\'s, and a web token for mallory can neither see nor answer it', async () => {
    const { file } = touchScript();
    await plain.userSays('m1', 'please make the file', mallory);
    const run = await runOfChat('webhook', 'm1');
    expect(run.userId).toBe('webhook:mallory');
    expect((run.options['origin'] as { startedBy?: string }).startedBy).toBe('webhook:mallory');
    const ask = await pendingAsk(run.id, 'confirm');

    // The attacker: the web user whose name is the chat sender's id.
    expect((await h.api('mallory', 'GET', `/runs/${run.id}`)).status).toBe(403);
    const answered = await h.api('mallory', 'POST', `/interactions/${encodeURIComponent(ask.id)}/respond`, { kind: 'confirm', confirmed: true });
    expect(answered.status).toBe(403);
    expect((await h.api('mallory', 'GET', '/runs')).body.runs.map((r: { id: string }) => r.id)).not.toContain(run.id);
    expect((await h.api('mallory', 'GET', '/interactions?status=pending')).body.interactions.map((i: { id: string }) => i.id)).not.toContain(ask.id);

    // Nothing ran or changed.
    expect((await h.store.getInteraction(ask.id))!.status).toBe('pending');
    expect(existsSync(file)).toBe(false);

    // An admin keeps their powers over it.
    expect((await h.api('carol', 'GET', `/runs/${run.id}`)).status).toBe(200);
    expect((await h.api('carol', 'GET', '/runs?userId=webhook:mallory')).body.runs.map((r: { id: string }) => r.id)).toContain(run.id);
  });

  test('web alice does not see chat alice\'s runs and her rules do not apply to them; mapped with users, they do', async () => {
    await h.store.addUserPermission({ userId: 'alice', rule: 'Bash(touch:*)', behavior: 'allow', createdBy: 'alice' });
    try {
      // Unmapped: the run is webhook:alice's; web alice's allow rule does not reach it, so it asks.
      const unmapped = touchScript();
      await plain.userSays('a1', 'please make the file', alice);
      const run = await runOfChat('webhook', 'a1');
      expect(run.userId).toBe('webhook:alice');
      await pendingAsk(run.id, 'confirm');
      expect(existsSync(unmapped.file)).toBe(false);
      expect((await h.api('alice', 'GET', `/runs/${run.id}`)).status).toBe(403);
      expect((await h.api('alice', 'GET', '/runs')).body.runs.map((r: { id: string }) => r.id)).not.toContain(run.id);

      // Mapped (`users: { alice: "alice" }` on webhook:team): the same person, so her rule applies.
      const mapped = touchScript();
      await team.userSays('a2', 'please make the file', alice);
      const mine = await runOfChat('webhook:team', 'a2');
      expect(mine.userId).toBe('alice');
      await eventually(() => (existsSync(mapped.file) ? true : undefined), 15_000);
      expect((await h.api('alice', 'GET', `/runs/${mine.id}`)).status).toBe(200);
      expect((await h.api('alice', 'GET', '/runs')).body.runs.map((r: { id: string }) => r.id)).toContain(mine.id);
    } finally {
      await h.store.removeUserPermission('alice', 'Bash(touch:*)', 'allow');
    }
  });

  test('a named instance\'s sender is webhook:team:<id>; an answer in chat is recorded with the principal or the mapped user', async () => {
    const { file } = touchScript();
    await team.userSays('m2', 'please make the file', mallory);
    const run = await runOfChat('webhook:team', 'm2');
    expect(run.userId).toBe('webhook:team:mallory');
    const ask = await pendingAsk(run.id, 'confirm');
    await team.userTaps(await shortIdIn(team, 'm2'), 'once', alice);
    await eventually(() => (existsSync(file) ? true : undefined), 15_000);
    const answered = (await h.store.getInteraction(ask.id))!;
    expect(answered.answeredBy).toBe('alice');
    expect(answered.response).toMatchObject({ userId: 'alice', channel: 'webhook:team' });

    // Unmapped, the answer is the principal's.
    const second = touchScript();
    await plain.userSays('a3', 'please make the file', alice);
    const other = await runOfChat('webhook', 'a3');
    const otherAsk = await pendingAsk(other.id, 'confirm');
    await shortIdIn(plain, 'a3');
    await plain.userSays('a3', 'yes', alice);
    await eventually(() => (existsSync(second.file) ? true : undefined), 15_000);
    expect((await h.store.getInteraction(otherAsk.id))!.answeredBy).toBe('webhook:alice');
    // The chat still says who in words people know.
    await eventually(() => (plain.lastMessages('a3').some((m) => /Approved by Alice in webhook/.test(m.text)) ? true : undefined), 15_000);
  });
});

describe('per-user rules and limits are the principal\'s', () => {
  test('an admin gives webhook:alice a rule and her chat runs use it; web alice cannot change it', async () => {
    const path = `/permissions/${encodeURIComponent('webhook:alice')}`;
    expect((await h.api('alice', 'POST', `${path}/allow`, { rule: 'Bash(touch:*)' })).status).toBe(403);
    expect((await h.api('alice', 'GET', path)).status).toBe(403);
    expect((await h.api('carol', 'POST', `${path}/allow`, { rule: 'Bash(touch:*)' })).status).toBe(201);
    try {
      const { file } = touchScript();
      await plain.userSays('r1', 'please make the file', alice);
      const run = await runOfChat('webhook', 'r1');
      expect(run.userId).toBe('webhook:alice');
      await eventually(() => (existsSync(file) ? true : undefined), 15_000);
    } finally {
      expect((await h.api('carol', 'DELETE', `${path}/allow/${encodeURIComponent('Bash(touch:*)')}`)).status).toBe(200);
    }
  });

  test('runs in flight are counted per principal: web mallory\'s do not use up webhook:mallory\'s, and the limit stops a chat run', async () => {
    const inFlight = (userId: string) => h.store.countRuns({ userId, status: ['running', 'idle', 'suspended'], limit: 1000 });
    maxRuns = (await inFlight('webhook:mallory')) + 1;
    try {
      // Web mallory holds as many runs as the limit allows.
      while ((await inFlight('mallory')) < maxRuns) {
        touchScript();
        expect((await h.api('mallory', 'POST', '/runs', { task: 'make a file', model })).status).toBe(201);
      }
      // Chat mallory still has one run left.
      touchScript();
      await plain.userSays('l1', 'please make the file', mallory);
      expect((await runOfChat('webhook', 'l1')).userId).toBe('webhook:mallory');
      // And then none: refused in the chat, no run started.
      await plain.userSays('l2', 'please make the file', mallory);
      expect(plain.lastMessages('l2').at(-1)!.text).toMatch(/Could not start a run: You have \d+ runs in flight/);
      expect(await h.store.listRuns({ sessionId: 'webhook:l2' })).toEqual([]);
    } finally {
      maxRuns = 1000;
    }
  });
});

describe('every way to answer in a chat checks the approver list', () => {
  test('mallory (allowFrom, not an approver) cannot answer a question by its option\'s text, /answer, or a bare yes', async () => {
    questionScript();
    await plain.userSays('q1', 'deploy it', alice);
    const run = await runOfChat('webhook', 'q1');
    const ask = await pendingAsk(run.id, 'questions');
    const shortId = await shortIdIn(plain, 'q1');

    for (const text of ['Yes, deploy', `/answer ${shortId} 1`, 'yes', 'no']) {
      await plain.userSays('q1', text, mallory);
      const record = (await h.store.getInteraction(ask.id))!;
      expect(record.status, text).toBe('pending');
      expect(record.answeredBy, text).toBeNull();
      // Refused, not handed to the agent either.
      expect(await h.store.listChatQueue({ sessionKey: 'webhook:q1' }), text).toEqual([]);
      expect(plain.lastMessages('q1').at(-1)!.text, text).toMatch(/only an approver/i);
    }
    expect(plain.lastMessages('q1').some((m) => /Answered by/.test(m.text))).toBe(false);
    expect((await h.store.getRun(run.id))!.status).toBe('running');

    // The approver's typed option is taken, in her principal's name.
    await plain.userSays('q1', 'Yes, deploy', alice);
    const answered = await eventually(async () => {
      const r = await h.store.getInteraction(ask.id);
      return r?.status === 'answered' ? r : undefined;
    });
    expect(answered.answeredBy).toBe('webhook:alice');
    expect(answered.response).toMatchObject({ answers: { 'Deploy now?': 'Yes, deploy' } });
  });

  test('a bare yes or no from mallory leaves an approval waiting and the tool not run', async () => {
    const { file } = touchScript();
    await plain.userSays('y1', 'please make the file', alice);
    const run = await runOfChat('webhook', 'y1');
    const ask = await pendingAsk(run.id, 'confirm');
    await shortIdIn(plain, 'y1');
    for (const text of ['yes', 'no', 'OK!']) {
      await plain.userSays('y1', text, mallory);
      expect((await h.store.getInteraction(ask.id))!.status, text).toBe('pending');
      expect(plain.lastMessages('y1').at(-1)!.text, text).toMatch(/only an approver/i);
    }
    expect(existsSync(file)).toBe(false);
  });
});

describe('a sender outside allowFrom gets no reply at all', () => {
  test('eve: answers, commands, taps and text change nothing and nothing is sent', async () => {
    const { file } = touchScript();
    await plain.userSays('g1', 'please make the file', alice);
    const run = await runOfChat('webhook', 'g1');
    const ask = await pendingAsk(run.id, 'confirm');
    const shortId = await shortIdIn(plain, 'g1');
    const before = plain.lastMessages('g1');

    for (const text of ['yes', 'no', `/approve ${shortId} once`, `/answer ${shortId} 1`, '/approve', '/status', '/stop', '/new', 'hello there']) {
      await plain.userSays('g1', text, eve);
      expect(plain.lastMessages('g1'), text).toEqual(before);
      expect((await h.store.getInteraction(ask.id))!.status, text).toBe('pending');
    }
    await plain.userTaps(shortId, 'once', eve);
    expect(plain.lastMessages('g1')).toEqual(before);
    expect((await h.store.getInteraction(ask.id))!.status).toBe('pending');
    expect((await h.store.getRun(run.id))!.status).toBe('running');
    expect(await h.store.listChatQueue({ sessionKey: 'webhook:g1' })).toEqual([]);

    // In a chat of her own: no run, no message.
    await plain.userSays('e1', 'hello', eve);
    expect(plain.lastMessages('e1')).toEqual([]);
    expect((await h.store.listRuns({ sessionId: 'webhook:e1' })).length).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});
