import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { answerFor, appendedLines, scenarioRuntime, writeScenario } from './test-support/scenario.js';

/**
 * A call marked interrupted by an earlier incarnation whose checkpoint never recorded that report
 * (it was suspended — woken by an answer, say — before its turn's next checkpoint) is reported
 * interrupted again on resume, never run again: its row is no longer `started`, and re-running it
 * repeated its side effect (found by the Postgres crash suite once the wake poll existed).
 */
let dir: string;
let store: SqlStore;
let paths: ReturnType<typeof writeScenario>;
const runners: DurableRunner[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-interrupted-'));
  store = await openSqliteStore(join(dir, 'sage.db'), { synchronous: 'normal' });
  paths = writeScenario(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a call an earlier incarnation reported interrupted', () => {
  it('is reported interrupted again on resume, never run again', async () => {
    const first = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 0, instanceId: 'first' });
    runners.push(first);
    await first.open();
    const { runId, outcome } = await first.start('write four lines', { model: paths.model });
    const suspended = await outcome;
    expect(suspended.status).toBe('suspended');
    const ask = (await store.getInteraction(suspended.pendingInteractionId!))!;

    // What an incarnation that died mid-call, then one that reported it and was suspended before its
    // checkpoint, leave behind: the intent, the call marked interrupted, the same checkpoint as before.
    const claim = (await store.claimRun(runId, 'ghost', 60_000, ['suspended']))!;
    await store.write({ runId, owner: 'ghost', epoch: claim.epoch, toolIntent: { toolCallId: 'call_0_0', toolName: 'AppendLine', input: { line: 'a' } } });
    await store.write({ runId, owner: 'ghost', epoch: claim.epoch, interruptedToolCalls: ['call_0_0'] });
    await store.write({ runId, owner: 'ghost', epoch: claim.epoch, run: { status: 'suspended', release: true, pendingInteractionId: ask.id } });
    expect((await store.listToolCalls(runId)).find((c) => c.toolCallId === 'call_0_0')).toMatchObject({ status: 'interrupted' });

    const second = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 0, instanceId: 'second' });
    runners.push(second);
    await second.open();
    const result = await second.respond(ask.id, answerFor(ask));
    expect(result.delivered).toBe('resumed');
    if (result.delivered === 'resumed') await result.handle.outcome;

    expect(appendedLines(paths.logPath)).not.toContain('a');
    const events = await store.readEvents(runId, { limit: 10_000 });
    const report = events.find((e) => e.type === 'tool.completed' && (e.data as { toolCallId: string }).toolCallId === 'call_0_0');
    expect(report?.data).toMatchObject({ isError: true, content: expect.stringMatching(/interrupted by a restart/) });
    expect(events.some((e) => e.type === 'tool.started' && (e.data as { toolCallId: string }).toolCallId === 'call_0_0')).toBe(false);
  });
});
