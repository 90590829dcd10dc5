import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ManualClock } from '../../model/recovery/test-support/manual-clock.js';
import { DurableRunDriver } from '../../server/durable-driver.js';
import { eventually } from '../../server/test-support/harness.js';
import { openSqliteStore } from '../../store/open-store.js';
import type { InteractionRecord, RunRecord, Store } from '../../store/index.js';
import { startChannels, type RunningChannels } from '../start-channels.js';
import { startFakeWebhookPeer } from './test-support/fake-webhook-peer.js';
import { webhookChannel } from './webhook-adapter.js';

/**
 * The attack: alice's relay posts her signed "yes", which approves a Bash call. Someone who saw that
 * request (a log, a proxy, a leaked capture) posts it again later, while another Bash call waits in
 * the same chat. The answer must be refused and change nothing: the new call stays pending and its
 * command does not run. Through startChannels, as `sage serve` wires it, over a real store.
 */
const silent = { info() {}, warn() {}, error() {}, debug() {} };
const SECRET = 'replay-test-secret';
const PATH = '/channels/webhook';

describe('a replayed webhook answer', { timeout: 60_000 }, () => {
  let dir: string;
  let store: Store;
  let driver: DurableRunDriver;
  let running: RunningChannels | undefined;
  let peer: Awaited<ReturnType<typeof startFakeWebhookPeer>>;
  const clock = new ManualClock({ start: Date.now() });
  const first = () => join(dir, 'first.txt');
  const second = () => join(dir, 'second.txt');

  const start = async () =>
    (running = (await startChannels({
      store,
      driver,
      config: { webhook: { secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: peer.url, approvers: ['alice'] } },
      factories: [webhookChannel],
      env: { SAGE_WEBHOOK_SECRET: SECRET },
      log: silent,
      clock,
    }))!);

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-webhook-replay-')));
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { toolCalls: [{ name: 'Bash', input: { command: `touch ${join(dir, 'first.txt')}` } }] },
          { text: 'first done' },
          { toolCalls: [{ name: 'Bash', input: { command: `touch ${join(dir, 'second.txt')}` } }] },
          { text: 'second done' },
        ],
      }),
    );
    store = await openSqliteStore(join(dir, 'sage.db'));
    driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true, defaultModel: `scripted:${script}` });
    peer = await startFakeWebhookPeer({ secret: SECRET, clock });
    await start();
  });
  afterAll(async () => {
    await running?.stop();
    await peer?.close();
    await driver?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const handle = (request: Request) => running!.routes.find((r) => r.path === PATH)!.handle(request);
  const says = (text: string) => peer.signedRequest(PATH, { chatId: 'chat1', senderId: 'alice', text });
  const runOf = (): Promise<RunRecord> => eventually(async () => (await store.listRuns({ sessionId: 'webhook:chat1', limit: 1 }))[0], 15_000);
  const pendingConfirms = async (): Promise<InteractionRecord[]> => (await store.listInteractions({ runId: (await runOf()).id, status: ['pending'] })).filter((i) => i.kind === 'confirm');
  const errorCode = async (response: Response) => ((await response.json()) as { error: { code: string; message: string } }).error;

  test("alice's captured \"yes\", posted again while a new Bash call waits, is refused (409) and approves nothing; once stale it is 401; so is the old body-only signature", async () => {
    expect((await handle(says('please make the first file'))).status).toBe(200);
    await eventually(() => peer.lastMessages('chat1').find((m) => m.buttons.length > 0), 15_000);
    const firstAsk = await eventually(async () => (await pendingConfirms())[0], 15_000);

    // What goes over the wire, kept by whoever can read it.
    const captured = says('yes');
    const approved = await handle(captured.clone());
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ handled: 'approval' });
    await eventually(() => existsSync(first()), 15_000);
    await eventually(() => peer.lastMessages('chat1').find((m) => m.text === 'first done'), 15_000);

    expect((await handle(says('now make the second file'))).status).toBe(200);
    const secondAsk = await eventually(async () => (await pendingConfirms()).find((i) => i.id !== firstAsk.id), 15_000);

    const replayed = await handle(captured.clone());
    expect(replayed.status).toBe(409);
    expect(await errorCode(replayed)).toMatchObject({ code: 'replayed' });
    expect((await pendingConfirms()).map((i) => i.id)).toEqual([secondAsk.id]);
    expect(existsSync(second())).toBe(false);

    // A restart (a new hub and adapter over the same store) remembers what it saw.
    await running!.stop();
    await start();
    const afterRestart = await handle(captured.clone());
    expect(afterRestart.status).toBe(409);
    expect((await pendingConfirms()).map((i) => i.id)).toEqual([secondAsk.id]);

    // Past the 300 s window the capture is simply too old.
    await clock.advance(301_000);
    const stale = await handle(captured.clone());
    expect(stale.status).toBe(401);
    const staleError = await errorCode(stale);
    expect(staleError.code).toBe('stale_timestamp');
    expect(staleError.message).toMatch(/30[01] s from the server's clock \(at most 300 s\)/);

    // The old scheme's signature (the body alone, no timestamp) is refused outright.
    const raw = JSON.stringify({ chatId: 'chat1', senderId: 'alice', text: 'yes' });
    const oldStyle = await handle(new Request(`http://sage${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-sage-signature': `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}` }, body: raw }));
    expect(oldStyle.status).toBe(401);
    expect(await errorCode(oldStyle)).toMatchObject({ code: 'missing_timestamp' });

    expect((await pendingConfirms()).map((i) => i.id)).toEqual([secondAsk.id]);
    expect(existsSync(second())).toBe(false);
    expect(await store.getInteraction(secondAsk.id)).toMatchObject({ status: 'pending' });

    // alice saying yes now, freshly signed, is what approves it.
    const fresh = await handle(says('yes'));
    expect(fresh.status).toBe(200);
    await eventually(() => existsSync(second()), 15_000);
    await eventually(() => peer.lastMessages('chat1').find((m) => m.text === 'second done'), 15_000);
    // Sage's own posts, signed with X-Sage-Timestamp, all passed the relay's checks.
    expect(peer.rejected).toBe(0);
  });
});
