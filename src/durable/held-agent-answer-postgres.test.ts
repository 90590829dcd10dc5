import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunFactory } from '../runtime/create-run.js';
import { openPostgresStore } from '../store/open-store.js';
import { InteractionAlreadyAnsweredError } from '../interaction/index.js';
import type { InteractionRecord, RunWrite } from '../store/index.js';
import type { SqlStore } from '../store/sql-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../store/test-support/postgres-test-db.js';
import { DurableRunner, type DurableRunHandle } from './index.js';
import { eventually } from '../test-support/eventually.js';

/**
 * On Postgres, an answer another instance stores reaches the instance that holds an external
 * agent's run by its NOTIFY (the holder's store poll is off here, so the push is what carries it):
 * the waiting ask gets the answer, the agent goes on in the holder, the run is never suspended.
 * The agent is the ACP fake of src/agents (its permission request is the ask).
 */
const fakeAgent = fileURLToPath(new URL('../agents/acp/test-support/fake-agent.ts', import.meta.url));
const tsx = import.meta.resolve('tsx');
const schema = testSchemaName('held');
let dir = '';
let home = '';
let project = '';
let storeA: SqlStore;
let storeB: SqlStore;
let holder: DurableRunner;
let answerer: DurableRunner;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-held-pg-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(project);
  // Two instances: separate pools, separate LISTEN connections.
  storeA = await openPostgresStore(TEST_DATABASE_URL, { schema });
  storeB = await openPostgresStore(TEST_DATABASE_URL, { schema });
  holder = await runnerOn(storeA, 'holder', { wakePollMs: 0 });
  answerer = await runnerOn(storeB, 'answerer');
});

function runnerOn(store: SqlStore, instanceId: string, extra: { wakePollMs?: number } = {}): Promise<DurableRunner> {
  const runtime = createRunFactory({ store, home });
  return new DurableRunner({ store, runtime, instanceId, idleSuspendMs: 0, ...extra }).open();
}

afterAll(async () => {
  await holder?.close();
  await answerer?.close();
  await storeA?.close();
  await storeB?.close();
  await dropSchema(schema);
  rmSync(dir, { recursive: true, force: true });
});

async function heldAsk(key: string, runner = holder): Promise<{ handle: DurableRunHandle; ask: InteractionRecord }> {
  const plan = [{ permission: { kind: 'execute', title: 'Run it', rawInput: { command: `touch ${key}.txt` } } }];
  const factory = createRunFactory({ store: storeA, home });
  const spec = await factory.admitRun({
    task: 'do it',
    surface: 'detached',
    model: 'agent:acp',
    cwd: project,
    oneTask: true,
    agent: {
      name: 'acp',
      command: [process.execPath, '--import', tsx, fakeAgent],
      env: { FAKE_ACP_PLAN: JSON.stringify(plan) },
    },
  });
  const handle = await runner.start('do it', { ...spec, runId: `run_held_${key}` });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [ask] = await storeB.listInteractions({ runId: handle.runId, status: ['pending'] });
    if (ask) return { handle, ask };
    if (Date.now() > deadline) throw new Error('the agent never asked');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const resultsOf = (finalText: string) => JSON.parse(/RESULTS (.*)$/s.exec(finalText)?.[1] ?? 'null') as unknown;

describe("an external agent's run held by one Postgres instance, answered through another", { timeout: 60_000 }, () => {
  it('allow: the holder\'s agent gets it by NOTIFY, once, and the run completes there', async () => {
    const { handle, ask } = await heldAsk('allow');
    const answered = await answerer.respond(ask.id, { kind: 'confirm', confirmed: true, userId: 'pat' });
    expect(answered.delivered).toBe('notified');
    const outcome = await handle.outcome;
    expect({ status: outcome.status, error: outcome.error }).toMatchObject({ status: 'completed' });
    expect(resultsOf(outcome.finalText)).toEqual([{ permission: 'yes' }]);
    const types = (await storeB.readEvents(handle.runId, { afterSeq: 0 })).map((e) => e.type);
    expect(types).not.toContain('run.suspended');
    expect(types.filter((t) => t === 'interaction.answered')).toHaveLength(1);
    const stored = await storeB.getInteraction(ask.id);
    expect(stored).toMatchObject({ status: 'answered', consumed: true, answeredBy: 'pat' });
    expect(answerer.liveRunIds()).not.toContain(handle.runId);
  });

  it('deny: the agent gets reject_once', async () => {
    const { handle, ask } = await heldAsk('deny');
    const answered = await answerer.respond(ask.id, { kind: 'confirm', confirmed: false, message: 'not now' });
    expect(answered.delivered).toBe('notified');
    const outcome = await handle.outcome;
    expect({ status: outcome.status, error: outcome.error }).toMatchObject({ status: 'completed' });
    expect(resultsOf(outcome.finalText)).toEqual([{ permission: 'no' }]);
  });

  it('cancel while the ask is pending: the run ends cancelled in the holder, the ask closed', async () => {
    const { handle, ask } = await heldAsk('cancel');
    expect(await answerer.cancel(handle.runId, 'stopped from elsewhere')).toBe('notified');
    const outcome = await handle.outcome;
    expect(outcome.status).toBe('cancelled');
    expect((await storeB.getInteraction(ask.id))?.status).toBe('cancelled');
    expect((await storeB.getRun(handle.runId))?.status).toBe('cancelled');
  });

  it('an answer in the holder and one through another instance at once: the agent acts on the one kept', async () => {
    // The holder's writes that carry answers wait until the other answer is in: an answer the
    // holder gave its agent before committing it would lose to the other one.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const write = async (w: RunWrite) => {
      if (w.answers?.length) await gate;
      return storeA.write(w);
    };
    const slowed = Object.create(storeA, { write: { value: write } }) as SqlStore;
    const racing = await runnerOn(slowed, 'racing', { wakePollMs: 0 });
    try {
      const { handle, ask } = await heldAsk('race', racing);
      const here = racing.respond(ask.id, { kind: 'confirm', confirmed: true, userId: 'here' });
      const there = answerer.respond(ask.id, { kind: 'confirm', confirmed: false, userId: 'there' });
      // Released once the other answer is in the store (or refused): the holder's answer cannot be
      // committed before then. Not once `there` returns: handing an answer to a live owner may wait
      // on the owner's next write, which this test holds.
      let thereSettled = false;
      void there.then(() => (thereSettled = true), () => (thereSettled = true));
      await eventually(async () => thereSettled || (await storeB.getInteraction(ask.id))?.status !== 'pending', {
        timeoutMs: 30_000, what: 'the other answer stored',
      });
      release();
      const settled = await Promise.allSettled([there, here]);
      const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
      expect(refused).toHaveLength(1);
      expect(refused[0]).toBeInstanceOf(InteractionAlreadyAnsweredError);
      const outcome = await handle.outcome;
      expect({ status: outcome.status, error: outcome.error }).toMatchObject({ status: 'completed' });
      const kept = await storeB.getInteraction(ask.id);
      expect(resultsOf(outcome.finalText)).toEqual([{ permission: kept?.answeredBy === 'here' ? 'yes' : 'no' }]);
    } finally {
      release();
      await racing.close();
    }
  });
});
