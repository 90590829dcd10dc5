import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ServerPolicy } from '../runtime/server-policy.js';
import { eventually, startHarness, type Harness } from '../server/test-support/harness.js';
import { startChannels, type RunningChannels } from './start-channels.js';
import { startFakeWebhookPeer } from './webhook/test-support/fake-webhook-peer.js';
import { webhookChannel } from './webhook/webhook-adapter.js';

/**
 * A chat channel whose runs are done by an external agent (`agent` in its config): the agent's permission request becomes the chat's approval, and a tap answers it.
 * The fake ACP agent stands in for Gemini CLI / Qwen Code.
 */
const fakeAgent = fileURLToPath(new URL('../agents/acp/test-support/fake-agent.ts', import.meta.url));
const silent = { info() {}, warn() {}, error() {}, debug() {} };
let home: string;
let h: Harness;
let peer: Awaited<ReturnType<typeof startFakeWebhookPeer>>;
let channels: RunningChannels | undefined;

beforeAll(async () => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'sage-chat-agent-')));
  mkdirSync(join(home, '.sage'), { recursive: true });
  const plan = [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch from-chat-agent.txt' } } }];
  writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ agents: { acp: { command: [process.execPath, '--import', import.meta.resolve('tsx'), fakeAgent], env: { FAKE_ACP_PLAN: JSON.stringify(plan) } } } }));
  h = await startHarness({ home, serverPolicy: new ServerPolicy({ agents: ['acp'], settings: { home } }) });
  peer = await startFakeWebhookPeer();
  channels = await startChannels({
    store: h.store,
    driver: h.driver,
    config: { webhook: { secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: peer.url, approvers: ['1001'], agent: 'acp' } },
    factories: [{ ...webhookChannel, create: (config) => peer.makeAdapter(config as Parameters<typeof peer.makeAdapter>[0]) }],
    env: { SAGE_WEBHOOK_SECRET: peer.secret },
    log: silent,
  });
});
afterAll(async () => {
  await channels?.stop();
  await peer?.close();
  await h?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('a chat channel with an external agent', { timeout: 30_000 }, () => {
  test("the agent's permission request is the chat's approval; a tap allows it and the agent's answer is posted", async () => {
    await peer.userSays('7001', 'do the thing', { senderId: '1001' });
    const prompt = await eventually(() => peer.lastMessages('7001').find((m) => m.buttons.length > 0), 20_000);
    expect(prompt.text).toContain('touch from-chat-agent.txt');
    const shortId = /\/approve (\S+)/.exec(prompt.buttons[0]!.command)![1]!;
    await peer.userTaps(shortId, 'once', { senderId: '1001' });
    const answer = await eventually(() => peer.lastMessages('7001').find((m) => m.text.startsWith('RESULTS')), 20_000);
    expect(answer.text).toContain('"permission":"yes"');
    const runs = await h.store.listRuns({ limit: 10 });
    expect(runs[0]?.options['agent']).toMatchObject({ name: 'acp' });
  });
});
