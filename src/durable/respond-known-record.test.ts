import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InteractionAlreadyAnsweredError } from '../interaction/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { DurableRunner } from './durable-runner.js';
import { appendedLines, scenarioRuntime, writeScenario } from './test-support/scenario.js';

/**
 * DurableRunner.respond(id, answer, known): the caller's fresh read of the request is used instead
 * of a second one (a server route reads it to check access). A record gone stale meanwhile — the
 * request answered elsewhere after it was read — must not let a second answer through.
 */
let dir: string;
let store: SqlStore;
let paths: ReturnType<typeof writeScenario>;
const runners: DurableRunner[] = [];
const runner = () => {
  const r = new DurableRunner({ store, runtime: scenarioRuntime(paths.logPath), idleSuspendMs: 0, leaseMs: 2000 });
  runners.push(r);
  return r;
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-respond-known-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
  paths = writeScenario(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close({ suspend: false });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('respond with the request as the caller read it', () => {
  it('does not read the request again', async () => {
    const handle = await runner().start('write four lines', { model: paths.model });
    const { pendingInteractionId: id } = await handle.outcome;
    const known = (await store.getInteraction(id!))!;
    const reads: string[] = [];
    const getInteraction = store.getInteraction.bind(store);
    store.getInteraction = (interactionId) => (reads.push(interactionId), getInteraction(interactionId));
    const driver = runner();
    const result = await driver.respond(id!, { kind: 'confirm', confirmed: true, userId: 'bob' }, known);
    expect(result.delivered).toBe('resumed');
    expect(reads).not.toContain(id);
    await (result.delivered === 'resumed' ? result.handle.outcome : undefined);
    expect(appendedLines(paths.logPath)).toEqual(['a']);
  });

  it('refuses a second answer given with a record read before the first one, naming who answered', async () => {
    const handle = await runner().start('write four lines', { model: paths.model });
    const { pendingInteractionId: id } = await handle.outcome;
    const stale = (await store.getInteraction(id!))!;
    expect(stale.status).toBe('pending');
    const first = await runner().respond(id!, { kind: 'confirm', confirmed: true, userId: 'bob' });
    await (first.delivered === 'resumed' ? first.handle.outcome : undefined);
    const second = runner().respond(id!, { kind: 'confirm', confirmed: false, userId: 'carol' }, stale);
    await expect(second).rejects.toBeInstanceOf(InteractionAlreadyAnsweredError);
    await expect(second).rejects.toMatchObject({ answeredBy: 'bob' });
    // The tool ran once, for the first answer.
    expect(appendedLines(paths.logPath)).toEqual(['a']);
    expect(await store.getInteraction(id!)).toMatchObject({ status: 'answered', answeredBy: 'bob' });
  });
});
