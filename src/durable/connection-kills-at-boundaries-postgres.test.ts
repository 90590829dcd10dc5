import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InteractionAlreadyAnsweredError } from '../interaction/index.js';
import { terminateBackends } from '../server/test-support/store-faults.js';
import { openPostgresStore } from '../store/open-store.js';
import { FINISHED_STATUSES, isStoreFault, type Store } from '../store/index.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../store/test-support/postgres-test-db.js';
import { DurableRunner } from './durable-runner.js';
import { boundaryKind, BOUNDARY_METHODS, runOf } from './test-support/boundaries.js';
import { inspectRun } from './test-support/crash-suite.js';
import { startOutageProxy, type OutageProxy } from './test-support/outage-proxy.js';
import { answerFor, caseLog, scenarioRuntime, SCENARIO_LINES, writeScenario } from './test-support/scenario.js';

/**
 * Where a case's fault lands: after its Nth boundary commit; inside AppendLine after it appended
 * `inTool`; or `onRead`, as the resumed run reads whether a request it asks again was answered
 * (between boundaries: a read the run's path depends on).
 */
interface FaultCase {
  runId: string;
  after?: number;
  inTool?: string;
  onRead?: boolean;
}

/**
 * The crash suite's guarantees with the store failing instead of the process: the run's Postgres
 * connections are terminated (pg_terminate_backend on this test's own backends, its pool and its
 * LISTEN connection) right after each durable boundary the clean run counts, and the server stays
 * unreachable until a statement has failed on it (a relay in front of Postgres closes every new
 * connection meanwhile). The same process and runner go on: nothing is restarted or recovered by
 * hand, and the person sends an answer again only when the store refused it.
 */
describe('Postgres connections killed at every durable boundary', () => {
  const schema = testSchemaName('bkill');
  const dir = mkdtempSync(join(tmpdir(), 'sage-bkill-'));
  const target = new URL(TEST_DATABASE_URL);
  let proxy: OutageProxy;
  let store: Store;
  let watched: Store;
  let runner: DurableRunner;
  let model = '';
  let boundaries = 0;

  const commits = new Map<string, number>();
  let current: FaultCase | undefined;
  /** The kind of boundary each case's fault came after, and what noticed the outage first. */
  const faulted = new Map<string, { kind: string; noticedBy?: string }>();
  /** `only`: the outage ends when that method fails, and the run's commits wait until it has. */
  let outage: { runId: string; only?: string; noticed: Promise<void>; end: () => void } | undefined;
  let killed = 0;

  async function startOutage(runId: string, kind: string, only?: string): Promise<void> {
    faulted.set(runId, { kind });
    let end = () => {};
    const noticed = new Promise<void>((r) => (end = r));
    outage = { runId, noticed, end, ...(only ? { only } : {}) };
    proxy.down();
    killed += await terminateBackends(TEST_DATABASE_URL, schema);
  }

  /** Requests the person is answering: their reads are the person's, not the run's. */
  const answering = new Set<string>();

  /** The runner's own upkeep, on a timer: a fault there says nothing of the run's path through it. */
  const BACKGROUND = new Set(['expireDue', 'claimOrphans', 'listOrphanCandidates', 'listWakeableRuns', 'renewLeases', 'dataVersion', 'ping', 'health']);

  /**
   * The first statement of the run's path (the runner driving or resuming it, the person reading or
   * answering it) that fails on the outage ends it: the store answers again from then on.
   */
  function noteFault(error: unknown, by: string): void {
    if (!outage || !isStoreFault(error) || BACKGROUND.has(by) || (outage.only && outage.only !== by)) return;
    const entry = faulted.get(outage.runId);
    if (entry && !entry.noticedBy) entry.noticedBy = by;
    outage.end();
    outage = undefined;
    proxy.up();
  }

  /** The store as the runner and the person use it: boundaries counted per run, faults noted. */
  function watch(inner: Store): Store {
    return new Proxy(inner, {
      get(t, name) {
        const value = Reflect.get(t, name, t) as unknown;
        if (typeof value !== 'function') return value;
        return (...a: unknown[]) => {
          const call = async () => {
            if (name === 'getInteraction' && current?.onRead && !faulted.has(current.runId) && String(a[0]).startsWith(`${current.runId}:`) && !answering.has(String(a[0])) && runner.handle(current.runId)) await startOutage(current.runId, 'read', 'getInteraction');
            // The step's result, written by the flush timer meanwhile, must not be the first to fail.
            if (outage?.only && outage.only !== name && (BOUNDARY_METHODS as readonly (string | symbol)[]).includes(name)) await outage.noticed;
            const result = await (value as (...x: unknown[]) => Promise<unknown>).apply(t, a);
            if (!(BOUNDARY_METHODS as readonly (string | symbol)[]).includes(name)) return result;
            const kind = boundaryKind(name as string, a[0], a[1], result);
            const runId = kind ? await runOf(t, name as string, a[0]) : undefined;
            if (kind && runId) {
              const n = (commits.get(runId) ?? 0) + 1;
              commits.set(runId, n);
              if (current?.runId === runId && n === current.after) await startOutage(runId, kind);
            }
            return result;
          };
          const out = call();
          out.catch((error: unknown) => noteFault(error, String(name)));
          return out;
        };
      },
    });
  }

  /** A person's or an operator's look at the store: asked again while the store is away. */
  async function retrying<T>(what: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await what();
      } catch (error) {
        if (!isStoreFault(error)) throw error;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  /**
   * The person: starts the run and answers each request until it finishes. Never recovers or
   * resumes it: a run whose write failed must go on by itself once the store answers.
   */
  async function play(c: FaultCase): Promise<{ storeFaults: number }> {
    let storeFaults = 0;
    current = c;
    writeFileSync(caseLog(dir, c.runId), '');
    try {
      await runner.start('write four lines', { runId: c.runId, model });
    } catch (error) {
      // The start committed its first boundary and failed after it: the run is the store's now.
      if (!isStoreFault(error)) throw error;
    }
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      for (let live = runner.handle(c.runId); live; live = runner.handle(c.runId)) if ((await live.outcome).storeFault) storeFaults++;
      const run = await retrying(() => watched.getRun(c.runId));
      if (run && FINISHED_STATUSES.includes(run.status)) return { storeFaults };
      const pending = await retrying(() => watched.listInteractions({ runId: c.runId, status: ['pending'] }));
      // Nothing to answer: the run is going on, or waits to be resumed from the store by itself.
      if (pending.length === 0) await new Promise((r) => setTimeout(r, 20));
      for (const interaction of pending) {
        await retrying(async () => {
          answering.add(interaction.id);
          try {
            await runner.respond(interaction.id, answerFor(interaction));
          } catch (error) {
            // The refused send's commit landed after all: the answer is the store's.
            if (!(error instanceof InteractionAlreadyAnsweredError)) throw error;
          } finally {
            answering.delete(interaction.id);
          }
        });
      }
    }
    throw new Error(`run ${c.runId} did not finish`);
  }

  beforeAll(async () => {
    // Migrated before the runner starts, straight to the server.
    await (await openPostgresStore(TEST_DATABASE_URL, { schema, max: 1 })).close();
    proxy = await startOutageProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(TEST_DATABASE_URL);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    store = await openPostgresStore(viaProxy.toString(), { schema, max: 4 });
    watched = watch(store);
    model = writeScenario(dir).model;
    runner = new DurableRunner({
      store: watched,
      runtime: scenarioRuntime(
        (runId) => caseLog(dir, runId),
        async (runId, line) => {
          if (current?.runId === runId && current.inTool === line) await startOutage(runId, 'in-tool');
        },
      ),
      idleSuspendMs: 0,
      leaseMs: 2_000,
      flushDelayMs: 1,
    });
    await runner.open();
  });
  afterAll(async () => {
    await runner?.close({ suspend: false });
    await store?.close();
    await proxy?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the scenario to the end and counts its durable boundaries', async () => {
    await play({ runId: 'run_clean' });
    boundaries = commits.get('run_clean') ?? 0;
    expect(boundaries).toBeGreaterThanOrEqual(12);
    const result = await inspectRun(store, 'run_clean', caseLog(dir, 'run_clean'));
    expect(result.status).toBe('completed');
    expect(result.lines).toEqual(SCENARIO_LINES);
  }, 30_000);

  it('finishes after a kill at each boundary, inside a tool and on a read: no answer lost or given twice, no side effect repeated, an interrupted call reported', async () => {
    expect(boundaries).toBeGreaterThan(0);
    // One more case than the clean run counted: a run can make one commit more with timing.
    const cases: FaultCase[] = Array.from({ length: boundaries + 1 }, (_, i) => ({ runId: `run_kill_${i + 1}`, after: i + 1 }));
    cases.push({ runId: 'run_in_tool', inTool: 'b' }, { runId: 'run_on_read', onRead: true });
    let stoppedRuns = 0;
    for (const c of cases) {
      const { storeFaults } = await play(c);
      stoppedRuns += storeFaults ? 1 : 0;
      expect(outage, `${c.runId}: the outage was never noticed`).toBeUndefined();
      const fault = faulted.get(c.runId);
      // A case past the run's last commit finished without a fault.
      if (!fault) expect(commits.get(c.runId), c.runId).toBeLessThan(c.after ?? 0);
      const result = await inspectRun(store, c.runId, caseLog(dir, c.runId));
      const at = `${c.runId} (after ${fault?.kind ?? 'none'}, noticed by ${fault?.noticedBy ?? 'nobody'})`;
      expect(result.status, at).toBe('completed');
      for (const line of SCENARIO_LINES) {
        const count = result.lines.filter((l) => l === line).length;
        const call = result.appendCalls.find((k) => k.line === line);
        // Exactly once when its result was recorded; at most once, and reported, when interrupted.
        if (call?.status === 'interrupted') expect(count, `${at}, line ${line}`).toBeLessThanOrEqual(1);
        else expect(count, `${at}, line ${line}`).toBe(1);
      }
      expect(result.pending, at).toEqual([]);
      expect(result.answeredTwice, at).toEqual([]);
      expect(result.seqsContiguous, at).toBe(true);
      if (c.inTool) {
        // Its side effect happened; its result never reached the store: reported, never run again.
        expect(result.lines).toEqual(SCENARIO_LINES);
        expect(result.appendCalls.find((k) => k.line === 'b'), at).toMatchObject({ status: 'interrupted' });
        for (const text of result.interruptedResults) expect(text).toMatch(/interrupted/);
      }
      if (c.onRead) expect(fault?.noticedBy, at).toBe('getInteraction');
    }
    const kinds = new Set([...faulted.values()].flatMap((f) => f.kind.split('+')));
    for (const kind of ['intent', 'result', 'checkpoint', 'ask', 'answer', 'claim', 'status', 'in-tool', 'read']) expect(kinds, kind).toContain(kind);
    expect(killed).toBeGreaterThan(0);
    expect(stoppedRuns).toBeGreaterThan(0);
    const noticed = [...faulted.values()].map((f) => f.noticedBy ?? 'nobody');
    console.log(
      `boundary kills: ${boundaries} boundaries, ${faulted.size} faults (${[...new Set(noticed)].map((n) => `${n} ${noticed.filter((x) => x === n).length}`).join(', ')}); ${killed} backends terminated; ${stoppedRuns} run incarnations stopped by the store and resumed by themselves`,
    );
  }, 120_000);
});
