import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { appendLineTool } from '../durable/test-support/append-line-tool.js';
import { openPostgresStore } from '../store/open-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../store/test-support/postgres-test-db.js';
import { eventually, startHarness, type Harness } from './test-support/harness.js';
import { answerThroughFaults, terminateBackends, type AnswerOutcome } from './test-support/store-faults.js';

const ROUNDS = 20;
const RUNS_PER_ROUND = 3;

describe('every Postgres connection of the server killed while answers are in flight', () => {
  const schema = testSchemaName('kills');
  let h: Harness;
  let log: string;

  beforeAll(async () => {
    h = await startHarness({
      store: () => openPostgresStore(TEST_DATABASE_URL, { schema }),
      tools: () => [appendLineTool(log)],
    });
    log = join(h.dir, 'appended.log');
  });
  afterAll(async () => {
    await h?.close();
    await dropSchema(schema);
  });

  test(`${ROUNDS} rounds: the server stays up, answers 200 / 409 / 503 store_unavailable (never 500), and each approved call runs once`, async () => {
    const seen = { unavailable: 0, refusedConnections: 0 };
    const outcomes: AnswerOutcome[] = [];
    const runIds: string[] = [];
    let killed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const started = await Promise.all(
        Array.from({ length: RUNS_PER_ROUND }, async (_, i) => {
          const line = `r${round}-${i}`;
          const model = h.script([{ text: 'appending', toolCalls: [{ name: 'AppendLine', input: { line } }] }, { text: 'appended' }]);
          const res = await h.api('alice', 'POST', '/runs', { task: `append ${line}`, model });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          const runId = res.body.id as string;
          const interactionId = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id, 15_000);
          return { runId, interactionId };
        }),
      );
      runIds.push(...started.map((s) => s.runId));
      // The kill lands at a different moment of the answers' writes each round.
      const answers = started.map((s) => answerThroughFaults(h, s.interactionId, { kind: 'confirm', confirmed: true }, seen));
      await new Promise((r) => setTimeout(r, round % 4));
      killed += await terminateBackends(TEST_DATABASE_URL, schema);
      outcomes.push(...(await Promise.all(answers)));
      const health = await h.api('nobody', 'GET', '/healthz');
      expect(health.status).toBe(200);
      // Done with its task, each run waits for its next message (a run whose write failed resumes
      // from the store by itself first); closing it keeps the user under the server's in-flight cap.
      for (const { runId } of started) {
        await eventually(async () => ((await h.store.getRun(runId))?.status === 'idle' ? true : undefined), 20_000);
        const closed = await h.api('alice', 'POST', `/runs/${runId}/close`, {});
        expect([200, 202], JSON.stringify(closed.body)).toContain(closed.status);
      }
    }
    expect(killed).toBeGreaterThan(0);

    // Every run finishes by itself (those whose write failed resume from the store), and each
    // approved call ran exactly once: no answer lost, none applied twice.
    for (const runId of runIds) await eventually(async () => ((await h.store.getRun(runId))?.status === 'completed' ? true : undefined), 20_000);
    const lines = readFileSync(log, 'utf8').trim().split('\n').sort();
    const expected = Array.from({ length: ROUNDS }, (_, r) => Array.from({ length: RUNS_PER_ROUND }, (_, i) => `r${r}-${i}`)).flat().sort();
    for (const runId of runIds) {
      const asked = await h.store.listInteractions({ runId });
      expect(asked.filter((a) => a.status === 'answered').length).toBeGreaterThanOrEqual(1);
      expect(asked.every((a) => a.status === 'answered')).toBe(true);
    }
    // At most once each, and every call that was not reported interrupted exactly once. A call is
    // reported interrupted, never run again, when the fault hit between its intent and its result
    // (as a crash there would): it ran once or not at all.
    expect(new Set(lines).size).toBe(lines.length);
    const calls = (await Promise.all(runIds.map((id) => h.store.listToolCalls(id)))).flat();
    const interrupted = calls.filter((c) => c.status === 'interrupted').map((c) => (c.input as { line: string }).line);
    expect(calls.filter((c) => c.status === 'completed').length + interrupted.length).toBe(expected.length);
    expect(expected.filter((line) => !lines.includes(line) && !interrupted.includes(line))).toEqual([]);
    expect(lines.filter((line) => !expected.includes(line))).toEqual([]);
    expect(outcomes.length).toBe(ROUNDS * RUNS_PER_ROUND);
    const health = await h.api('nobody', 'GET', '/readyz');
    expect(health.status).toBe(200);
    console.log(`kills: ${killed} backends terminated; ${seen.unavailable} answers refused 503 and sent again; ${interrupted.length} calls interrupted; ${lines.length} lines`);
  }, 240_000);
});
