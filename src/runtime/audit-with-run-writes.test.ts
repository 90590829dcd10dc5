import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableRunner } from '../durable/durable-runner.js';
import { answerFor, appendedLines, scenarioRuntime, writeScenario } from '../durable/test-support/scenario.js';
import { createPermissionEngine } from '../permission/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { AuditEntry, RunWrite } from '../store/index.js';
import type { SqlStore } from '../store/sql-store.js';
import { eventually } from '../test-support/eventually.js';
import { auditLogFromStore } from './store-adapters.js';

/**
 * A run's permission decisions and answers are committed with the run's own writes when a runner
 * of this process drives it (no commit of their own before the decision returns), and appended on
 * their own otherwise — or when the write that carried them is refused.
 */
let dir: string;
let store: SqlStore;
let paths: ReturnType<typeof writeScenario>;
/** Every appendAudit call (a commit of its own) and every write that carried audit rows. */
let appended: AuditEntry[];
let carried: AuditEntry[][];
const runners: DurableRunner[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-audit-writes-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  paths = writeScenario(dir);
  appended = [];
  carried = [];
  const appendAudit = store.appendAudit.bind(store);
  store.appendAudit = (entry) => (appended.push(entry), appendAudit(entry));
  const write = store.write.bind(store);
  store.write = (w: RunWrite) => {
    if (w.audit?.length) carried.push([...w.audit]);
    return write(w);
  };
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function runner(): DurableRunner {
  const runtime = { ...scenarioRuntime(paths.logPath), createGate: () => createPermissionEngine({ audit: auditLogFromStore(store) }) };
  const r = new DurableRunner({ store, runtime, idleSuspendMs: 0, flushDelayMs: 0, leaseMs: 2000 });
  runners.push(r);
  return r;
}

/** Answers every ask of the run with `driver` until it ends. */
async function answerAll(driver: DurableRunner, runId: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const run = await store.getRun(runId);
    if (!run?.pendingInteractionId) return;
    const pending = await store.getInteraction(run.pendingInteractionId);
    const result = await driver.respond(pending!.id, answerFor(pending!, 'alice'));
    let handle = result.delivered === 'resumed' ? result.handle : driver.handle(runId);
    while (handle) {
      await handle.outcome;
      handle = driver.handle(runId);
    }
  }
  throw new Error('the run never ended');
}

describe('audit rows of a run driven here', () => {
  it('ride with the run writes: every decision and answer is in the log, none committed on its own', async () => {
    const driver = runner();
    const handle = await driver.start('write four lines', { model: paths.model, userId: 'alice' });
    await handle.outcome;
    await answerAll(driver, handle.runId);
    expect(appendedLines(paths.logPath)).toEqual(['a', 'b', 'c', 'd']);

    const log = await store.listAudit({ runId: handle.runId });
    const appendLine = log.filter((e) => e.toolName === 'AppendLine');
    // Four calls: each decided "ask" when first reached, decided again on its resume, and answered.
    expect(appendLine.filter((e) => e.data?.['kind'] === 'answer').map((e) => e.behavior)).toEqual(['allow', 'allow', 'allow', 'allow']);
    expect(appendLine.filter((e) => e.data?.['kind'] === 'answer').every((e) => e.userId === 'alice' && e.source === 'user')).toBe(true);
    expect(appendLine.filter((e) => e.data?.['kind'] === 'decision' && e.behavior === 'ask').length).toBeGreaterThanOrEqual(4);
    expect(appended).toEqual([]);
    expect(carried.flat()).toHaveLength(log.length);
  });

  it('lands in the same transaction as the request the decision led to', async () => {
    const driver = runner();
    const handle = await driver.start('write four lines', { model: paths.model, userId: 'alice' });
    const outcome = await handle.outcome;
    expect(outcome.status).toBe('suspended');
    const request = await store.getInteraction(outcome.pendingInteractionId!);
    const asked = (await store.listAudit({ runId: handle.runId })).filter((e) => e.toolCallId === request!.toolCallId);
    expect(asked.map((e) => [e.data?.['kind'], e.behavior])).toEqual([['decision', 'ask']]);
    // The one write that committed the request (with the suspension) carried its decision.
    expect(carried).toHaveLength(1);
    expect(carried[0]!.map((e) => e.toolCallId)).toEqual([request!.toolCallId]);
    expect(appended).toEqual([]);
  });

  it('are appended on their own for a run no runner here drives', async () => {
    const audit = auditLogFromStore(store);
    await audit.append({ at: Date.now(), kind: 'decision', runId: 'run_elsewhere', sessionId: 's', userId: 'bob', toolCallId: 'c1', toolName: 'Bash', inputHash: 'h', behavior: 'deny', reason: 'no', source: 'rule' });
    expect(appended.map((e) => [e.runId, e.behavior])).toEqual([['run_elsewhere', 'deny']]);
    expect(await store.listAudit({ runId: 'run_elsewhere' })).toHaveLength(1);
  });

  it('are appended on their own when the write that carried them is refused (the run was claimed elsewhere)', async () => {
    const driver = runner();
    const handle = await driver.start('write four lines', { model: paths.model, userId: 'alice' });
    const { pendingInteractionId } = await handle.outcome;
    const request = await store.getInteraction(pendingInteractionId!);
    // The answer resumes the run here; its first write (claim + answer + intent) is refused, as if
    // another process had claimed the run first.
    const write = store.write;
    let refused = 0;
    store.write = async (w: RunWrite) => {
      if (w.claim && refused === 0) {
        refused++;
        if (w.audit?.length) carried.push([...w.audit]);
        const claimed = await store.claimRun(handle.runId, 'someone-else', 60_000, ['suspended']);
        expect(claimed).toBeDefined();
      }
      return write(w);
    };
    await driver.respond(pendingInteractionId!, answerFor(request!, 'alice')).catch(() => undefined);
    // The refused write's rows are appended on their own once the refusal is seen.
    await eventually(() => refused > 0 && appended.length >= (carried.at(-1)?.length ?? 1), { what: 'the spilled audit rows' });
    expect(refused).toBe(1);
    const spilled = carried.at(-1)!;
    expect(spilled.length).toBeGreaterThan(0);
    // What the refused write carried reached the log anyway, each row once.
    expect(appended.map((e) => [e.toolCallId, e.data?.['kind'], e.behavior])).toEqual(spilled.map((e) => [e.toolCallId, e.data?.['kind'], e.behavior]));
    const log = await store.listAudit({ runId: handle.runId });
    for (const entry of spilled) expect(log.filter((e) => e.toolCallId === entry.toolCallId && e.data?.['kind'] === entry.data?.['kind'] && e.at === entry.at)).toHaveLength(1);
  });
});
