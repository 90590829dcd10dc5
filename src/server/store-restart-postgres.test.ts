import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { appendLineTool } from '../durable/test-support/append-line-tool.js';
import { openPostgresStore } from '../store/open-store.js';
import { startPrivatePostgres, type PrivatePostgres } from '../store/test-support/private-postgres.js';
import { eventually, startHarness, type Harness } from './test-support/harness.js';
import { answerThroughFaults } from './test-support/store-faults.js';

const IN_FLIGHT = 16;
/** The bound: answers are taken again within this long of Postgres accepting connections. */
const RESUME_WITHIN_MS = 5_000;

/** A private cluster (initdb in a temp folder) the test may restart and stop; the shared server is not touched. */
describe('Postgres restarted or away under a live server', () => {
  let pg: PrivatePostgres;
  let h: Harness;
  let log: string;
  let round = 0;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    h = await startHarness({ store: () => openPostgresStore(pg.url, { schema: 'restart' }), tools: () => [appendLineTool(log)] });
    log = join(h.dir, 'appended.log');
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await pg?.destroy();
  });

  /** Starts IN_FLIGHT runs that each ask to append one line, and returns them once all wait. */
  async function askingRuns(): Promise<{ runId: string; interactionId: string; line: string }[]> {
    round++;
    return Promise.all(
      Array.from({ length: IN_FLIGHT }, async (_, i) => {
        const line = `${round}-${i}`;
        const res = await h.api('alice', 'POST', '/runs', { task: `append ${line}`, model: h.script([{ text: 'appending', toolCalls: [{ name: 'AppendLine', input: { line } }] }, { text: 'appended' }]) });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        const runId = res.body.id as string;
        const interactionId = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id, 20_000);
        return { runId, interactionId, line };
      }),
    );
  }

  /** Every run goes idle by itself (no restart, no resend beyond the answers'); its call ran at most once, and exactly once unless reported interrupted. */
  async function expectExactlyOnce(runs: { runId: string; line: string }[]): Promise<void> {
    for (const { runId } of runs) await eventually(async () => ((await h.store.getRun(runId))?.status === 'idle' ? true : undefined), 20_000);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    for (const { runId, line } of runs) {
      const calls = await h.store.listToolCalls(runId);
      expect(calls).toHaveLength(1);
      // Ran once; or reported interrupted (the fault hit between its intent and its result), then at most once.
      const times = lines.filter((l) => l === line).length;
      if (calls[0]!.status === 'interrupted') expect(times).toBeLessThanOrEqual(1);
      else expect(times).toBe(1);
      const closed = await h.api('alice', 'POST', `/runs/${runId}/close`, {});
      expect([200, 202]).toContain(closed.status);
      await eventually(async () => ((await h.store.getRun(runId))?.status === 'completed' ? true : undefined));
      // The approval and the next-message ask the close answered: each answered once, none left open.
      expect((await h.store.listInteractions({ runId })).map((a) => a.status)).toEqual(['answered', 'answered']);
    }
  }

  test(`pg_ctl restart during ${IN_FLIGHT} answers in flight: the server stays up, answers resume within ${RESUME_WITHIN_MS / 1000} s, none lost or doubled`, async () => {
    const runs = await askingRuns();
    const seen = { unavailable: 0, refusedConnections: 0 };
    let back = Infinity;
    const answers = runs.map((r) => answerThroughFaults(h, r.interactionId, { kind: 'confirm', confirmed: true }, seen, () => back + RESUME_WITHIN_MS));
    await pg.restart();
    back = Date.now();
    const outcomes = await Promise.all(answers);
    expect(outcomes).toHaveLength(IN_FLIGHT);
    expect((await h.api('nobody', 'GET', '/healthz')).status).toBe(200);
    await expectExactlyOnce(runs);
  }, 120_000);

  test('the store away 10 s (connections refused): 503 store_unavailable with Retry-After, /healthz alive and says so, /readyz 503; everything resumes once it is back', async () => {
    const runs = await askingRuns();
    await pg.stop();
    const down = await h.api('alice', 'POST', `/interactions/${encodeURIComponent(runs[0]!.interactionId)}/respond`, { kind: 'confirm', confirmed: true });
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('store_unavailable');
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    const ready = await h.api('nobody', 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error.code).toBe('store_unavailable');
    const live = await h.api('nobody', 'GET', '/healthz');
    expect(live.status).toBe(200);
    expect(live.body.storeStatus).toBe('unavailable');
    const started = await h.api('alice', 'POST', '/runs', { task: 'not now', model: h.script([{ text: 'hi' }]) });
    expect(started.status).toBe(503);

    const seen = { unavailable: 0, refusedConnections: 0 };
    let back = Infinity;
    const answers = runs.map((r) => answerThroughFaults(h, r.interactionId, { kind: 'confirm', confirmed: true }, seen, () => back + RESUME_WITHIN_MS, 250));
    // The outage's length is the scenario: answers keep coming (and are refused) all along.
    // eslint-disable-next-line sage/no-fixed-sleep -- the outage's length is the subject
    await new Promise((r) => setTimeout(r, 10_000));
    await pg.start();
    back = Date.now();
    await Promise.all(answers);
    expect(seen.unavailable).toBeGreaterThan(0);
    expect((await h.api('nobody', 'GET', '/readyz')).status).toBe(200);
    await expectExactlyOnce(runs);
  }, 120_000);
});
