import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { appendedLines, scenarioRuntime, writeScenario } from './test-support/scenario.js';

let dir: string;
let store: SqlStore;
let paths: ReturnType<typeof writeScenario>;
let runner: DurableRunner;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-auto-answer-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  paths = writeScenario(dir);
  runner = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 0 });
});
afterEach(async () => {
  await runner.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a non-interactive run that names no auto-answer', () => {
  it('denies every approval (nobody chose to allow), so no side effect runs', async () => {
    const handle = await runner.start('write four lines', { model: paths.model, mode: 'non-interactive' });
    // It ends its task and waits for a next message (this runtime keeps the run open).
    expect((await handle.outcome).status).toBe('suspended');
    expect(appendedLines(paths.logPath)).toEqual([]);
    const asks = await store.listInteractions({ runId: handle.runId });
    const approvals = asks.filter((a) => a.kind === 'confirm');
    expect(approvals.length).toBeGreaterThan(0);
    expect(approvals.every((a) => (a.response as { confirmed?: boolean } | null)?.confirmed === false)).toBe(true);
  });
});
