import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { appendLineTool } from '../durable/test-support/append-line-tool.js';
import type { Store } from '../store/index.js';
import { openSqliteStore } from '../store/open-store.js';
import { defineTool } from '../tool/index.js';
import { eventually, startHarness, type Harness } from './test-support/harness.js';
import { answerThroughFaults, fillDisk } from './test-support/store-faults.js';

/**
 * A run the server accepted (201) and that then fails mid-step because the disk filled, at a point
 * the test picks: inside a read-only tool (its result more than the write-ahead log has room for),
 * at the commit of its approval request, right after its row is created, inside an approved call.
 * Once space is freed the run must go on by itself: ask for its approval, take it, finish — no
 * restart, no resend of what the server accepted.
 */
describe('SQLite disk full in the middle of an accepted run', () => {
  const mountPoint = mkdtempSync(join(tmpdir(), 'sage-full-step-'));
  let h: Harness;
  let log: string;
  let accepted: () => void = () => {};
  const wasAccepted = new Promise<void>((r) => (accepted = r));
  let filler: string | undefined;
  let fills = 0;

  const fillTool = defineTool({
    name: 'Survey',
    description: 'Looks around (fills the disk, in this test).',
    inputSchema: z.object({}),
    risk: 'LOW',
    readOnly: true,
    async execute() {
      // Once, and only after the server answered 201 for the run.
      await wasAccepted;
      if (fills++ === 0) filler = fillDisk(mountPoint);
      return 'surveyed '.repeat(40_000);
    },
  });

  /** The run whose next commit of a request fills the disk first (set once its 201 is in). */
  let fillAtAskOf: string | undefined;
  /** The next run created fills the disk right after its row is committed. */
  let fillAfterCreate = false;
  function fillBeforeAsk(store: Store): Store {
    const write = store.write.bind(store);
    const saveInteraction = store.saveInteraction.bind(store);
    const maybeFill = (runId: string) => {
      if (runId !== fillAtAskOf) return;
      fillAtAskOf = undefined;
      filler = fillDisk(mountPoint);
    };
    store.write = async (w) => {
      if (w.asks?.length) maybeFill(w.runId);
      return write(w);
    };
    const createRun = store.createRun.bind(store);
    store.createRun = async (...a: Parameters<Store['createRun']>) => {
      const created = await createRun(...a);
      if (fillAfterCreate) {
        fillAfterCreate = false;
        filler = fillDisk(mountPoint);
      }
      return created;
    };
    store.saveInteraction = async (request, options) => {
      maybeFill(request.runId);
      return saveInteraction(request, options);
    };
    return store;
  }

  let unpause: () => void = () => {};
  const unpaused = new Promise<void>((r) => (unpause = r));
  const pauseTool = defineTool({
    name: 'Pause',
    description: 'Waits for the test.',
    inputSchema: z.object({}),
    risk: 'LOW',
    readOnly: true,
    async execute() {
      await unpaused;
      return 'resumed';
    },
  });

  beforeAll(async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint]);
    h = await startHarness({ store: async () => fillBeforeAsk(await openSqliteStore(join(mountPoint, 'sage.db'))), tools: () => [fillTool, pauseTool, appendLineTool(log, (line) => void (line === 'fills-the-disk' && (filler = fillDisk(mountPoint))))] });
    log = join(h.dir, 'appended.log');
  });
  afterAll(async () => {
    await h?.close();
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  test('the step fails on the full disk; once space is freed the run asks for its approval by itself and finishes', async () => {
    const model = h.script([
      { text: 'looking', toolCalls: [{ name: 'Survey', input: {} }] },
      { text: 'appending', toolCalls: [{ name: 'AppendLine', input: { line: 'after-full' } }] },
      { text: 'appended' },
    ]);
    const res = await h.api('alice', 'POST', '/runs', { task: 'survey, then append', model });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const runId = res.body.id as string;
    accepted();

    // The step's commit failed on the full disk: the server says so.
    await eventually(async () => ((await h.api('nobody', 'GET', '/readyz')).body?.error?.code === 'disk_full' ? true : undefined), 20_000);
    expect(filler).toBeDefined();
    expect(await h.store.listInteractions({ runId, status: ['pending'] })).toEqual([]);

    unlinkSync(filler!);
    const ask = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id, 20_000);
    const seen = { unavailable: 0, refusedConnections: 0 };
    await answerThroughFaults(h, ask, { kind: 'confirm', confirmed: true }, seen);
    await eventually(async () => ((await h.store.getRun(runId))?.status === 'idle' ? true : undefined), 20_000);

    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['after-full']);
    // A read-only tool has no intent: the resumed step runs it again (it fills the disk only once).
    expect(fills).toBeGreaterThanOrEqual(1);
    const calls = await h.store.listToolCalls(runId);
    expect(calls.filter((c) => c.toolName === 'AppendLine').map((c) => c.status)).toEqual(['completed']);
    expect((await h.api('nobody', 'GET', '/readyz')).status).toBe(200);
    console.log(`disk full mid-step: Survey ran ${fills} times; ${seen.unavailable} answers refused 503 and sent again`);
  }, 90_000);

  test('the commit of its approval request fails on the full disk; once space is freed the request shows and the run finishes', async () => {
    const model = h.script([
      { text: 'pausing', toolCalls: [{ name: 'Pause', input: {} }] },
      { text: 'appending', toolCalls: [{ name: 'AppendLine', input: { line: 'ask-after-full' } }] },
      { text: 'appended' },
    ]);
    filler = undefined;
    const res = await h.api('alice', 'POST', '/runs', { task: 'append', model });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const runId = res.body.id as string;
    fillAtAskOf = runId;
    unpause();
    await eventually(async () => (filler ? true : undefined), 20_000);
    await eventually(async () => ((await h.api('nobody', 'GET', '/readyz')).body?.error?.code === 'disk_full' ? true : undefined), 20_000);
    expect(await h.store.listInteractions({ runId, status: ['pending'] })).toEqual([]);

    unlinkSync(filler!);
    const ask = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id, 20_000);
    const seen = { unavailable: 0, refusedConnections: 0 };
    await answerThroughFaults(h, ask, { kind: 'confirm', confirmed: true }, seen);
    await eventually(async () => ((await h.store.getRun(runId))?.status === 'idle' ? true : undefined), 20_000);
    expect(readFileSync(log, 'utf8').trim().split('\n').filter((l) => l === 'ask-after-full')).toEqual(['ask-after-full']);
    expect((await h.store.listToolCalls(runId)).map((c) => c.status)).toEqual(['completed']);
    expect((await h.api('nobody', 'GET', '/readyz')).status).toBe(200);
  }, 90_000);

  test('created, then the disk fills before its first step is written: 201, and the run asks for its approval once space is freed', async () => {
    const model = h.script([{ text: 'appending', toolCalls: [{ name: 'AppendLine', input: { line: 'created-then-full' } }] }, { text: 'appended' }]);
    filler = undefined;
    fillAfterCreate = true;
    const res = await h.api('alice', 'POST', '/runs', { task: 'append', model });
    // Its row was committed before the disk filled: the server accepted it.
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(filler).toBeDefined();
    const run = await h.store.getRun(res.body.id as string);
    expect(run).toBeDefined();
    unlinkSync(filler!);
    const ask = await eventually(async () => (await h.store.listInteractions({ runId: run!.id, status: ['pending'] }))[0]?.id, 20_000);
    const seen = { unavailable: 0, refusedConnections: 0 };
    await answerThroughFaults(h, ask, { kind: 'confirm', confirmed: true }, seen);
    await eventually(async () => ((await h.store.getRun(run!.id))?.status === 'idle' ? true : undefined), 20_000);
    expect(readFileSync(log, 'utf8').trim().split('\n').filter((l) => l === 'created-then-full')).toEqual(['created-then-full']);
  }, 90_000);

  test('the disk fills inside an approved call: its result cannot be written; once space is freed the call is reported interrupted (never run again) and the next approval shows', async () => {
    const model = h.script([
      { text: 'first', toolCalls: [{ name: 'AppendLine', input: { line: 'fills-the-disk' } }] },
      { text: 'second', toolCalls: [{ name: 'AppendLine', input: { line: 'after-the-fill' } }] },
      { text: 'done' },
    ]);
    filler = undefined;
    const res = await h.api('alice', 'POST', '/runs', { task: 'append twice', model });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const runId = res.body.id as string;
    const seen = { unavailable: 0, refusedConnections: 0 };
    const first = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id, 20_000);
    await answerThroughFaults(h, first, { kind: 'confirm', confirmed: true }, seen);
    await eventually(async () => (filler ? true : undefined), 20_000);
    await eventually(async () => ((await h.api('nobody', 'GET', '/readyz')).body?.error?.code === 'disk_full' ? true : undefined), 20_000);

    unlinkSync(filler!);
    const second = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] })).find((i) => i.id !== first)?.id, 20_000);
    await answerThroughFaults(h, second, { kind: 'confirm', confirmed: true }, seen);
    await eventually(async () => ((await h.store.getRun(runId))?.status === 'idle' ? true : undefined), 20_000);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines.filter((l) => l === 'fills-the-disk')).toEqual(['fills-the-disk']);
    expect(lines.filter((l) => l === 'after-the-fill')).toEqual(['after-the-fill']);
    const calls = await h.store.listToolCalls(runId);
    console.log(`disk full in an approved call: ${calls.map((c) => `${(c.input as { line: string }).line} ${c.status}`).join(', ')}`);
    expect(calls.map((c) => c.status)).toEqual([expect.stringMatching(/interrupted|completed/), 'completed']);
  }, 90_000);
});
