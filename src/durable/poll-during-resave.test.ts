import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { InteractionResponse } from '../interaction/index.js';
import type { Store } from '../store/index.js';
import { DurableRunner } from './durable-runner.js';
import { answerFor, scenarioRuntime, writeScenario } from './test-support/scenario.js';

// A run resumed after its ask was answered in the store asks again and its save reads the answer.
// The wake poll, looking meanwhile, sees the same answer for a request the broker still calls
// pending: it must leave it to that save, not release the run (a subagent released so made its
// parent's Task call return "waiting" after a crash recovery, and the parent end suspended).

let dir: string;
let store: Store;
let paths: ReturnType<typeof writeScenario>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-poll-resave-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  paths = writeScenario(dir);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const runnerOf = (wakePollMs = 0) => new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 0, wakePollMs }).open();

test('the wake poll looking while a resumed run re-reads its answered ask leaves the answer to that read', async () => {
  const first = await runnerOf();
  const started = await first.start('write four lines', { model: paths.model });
  expect((await started.outcome).status).toBe('suspended');
  await first.close();
  const [ask] = await store.listInteractions({ runId: started.runId, status: ['pending'] });
  const response = { ...answerFor(ask!), requestId: ask!.id, respondedAt: new Date().toISOString() } as InteractionResponse;
  await store.claimAnswer(ask!.id, response);

  // The resumed loop's read of its ask waits until the poll has looked at that ask and finished its
  // pass (the next pass has begun: it reads the data version first).
  let looked = false;
  let polled!: () => void;
  const pollDone = new Promise<void>((resolve) => (polled = resolve));
  const listInteractions = store.listInteractions.bind(store);
  store.listInteractions = async (query) => {
    const found = await listInteractions(query);
    if (query?.ids?.includes(ask!.id)) looked = true;
    return found;
  };
  const dataVersion = store.dataVersion!.bind(store);
  store.dataVersion = () => {
    if (looked) polled();
    return dataVersion();
  };
  const getInteraction = store.getInteraction.bind(store);
  store.getInteraction = async (id) => {
    if (id === ask!.id) await pollDone;
    return getInteraction(id);
  };

  const second = await runnerOf(5);
  const resumed = await second.resume(started.runId);
  const outcome = await resumed.outcome;
  await second.close();
  // This incarnation took the answer and went on to the next ask (released there: nobody answers).
  expect(outcome.status).toBe('suspended');
  expect(outcome.pendingInteractionId).toBeDefined();
  expect(outcome.pendingInteractionId).not.toBe(ask!.id);
});
