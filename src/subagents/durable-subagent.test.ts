import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { DurableRunner } from '../durable/durable-runner.js';
import { createRunFactory } from '../runtime/create-run.js';
import { openSqliteStore } from '../store/open-store.js';
import { eventually } from '../test-support/eventually.js';
import type { Store } from '../store/index.js';
import { childRunId } from './subagent-meta.js';

// A subagent is durable like any run: its ask waits in the store, the parent is released with it,
// and whoever answers (another process, later) gets both finished — the parent's Task call
// re-attaching to the same subagent, never starting a second one.

let dir: string;
let project: string;
let store: Store;

beforeEach(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-subagent-durable-')));
  project = join(dir, 'project');
  mkdirSync(join(dir, 'home', '.sage'), { recursive: true });
  mkdirSync(project);
  store = await openSqliteStore(join(dir, 'sage.db'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function model(): string {
  const file = join(dir, 'script.json');
  writeFileSync(
    file,
    JSON.stringify({
      turns: [{ toolCalls: [{ id: 'call_task', name: 'Task', input: { description: 'write', prompt: 'write a file', subagent_type: 'general-purpose' } }] }, { text: 'parent done' }],
      agents: { 'general-purpose': { turns: [{ toolCalls: [{ name: 'Write', input: { file_path: join(project, 'out.txt'), content: 'x' } }] }, { text: 'wrote out.txt' }] } },
    }),
  );
  return `scripted:${file}`;
}

const runnerOf = (options: { leaseMs?: number } = {}) => new DurableRunner({ store, runtime: createRunFactory({ store, home: join(dir, 'home') }), idleSuspendMs: 0, ...options }).open();

describe('a subagent waiting for an approval', () => {
  test('releases its parent; answered from another runner, the subagent finishes and recover finishes the parent with its report', async () => {
    const first = await runnerOf();
    const factory = createRunFactory({ store, home: join(dir, 'home') });
    const spec = await factory.admitRun({ task: 't', surface: 'detached', model: model(), cwd: project, oneTask: true });
    const handle = await first.start('t', spec);
    const released = await handle.outcome;
    expect(released.status).toBe('suspended');
    const childId = childRunId(handle.runId, 'call_task');
    expect((await store.getRun(childId))?.status).toBe('suspended');
    const [ask] = await store.listInteractions({ runId: childId, status: ['pending'] });
    expect(ask?.request).toMatchObject({ kind: 'confirm', toolName: 'Write', agent: { id: childId, type: 'general-purpose' } });
    // The parent's stored stream has the ask too (a page following the parent shows and answers it).
    const relayed = (await store.readEvents(handle.runId)).find((e) => e.type === 'interaction.requested');
    expect(relayed?.data).toMatchObject({ agent: { id: childId, type: 'general-purpose' }, request: { id: ask!.id, agent: { id: childId } } });
    await first.close();

    const second = await runnerOf();
    const answered = await second.respond(ask!.id, { kind: 'confirm', confirmed: true });
    expect(answered.delivered).toBe('resumed');
    if (answered.delivered === 'resumed') expect((await answered.handle.outcome).status).toBe('completed');
    // Resumed at once by this runner (the subagent ended here) or by recover: either way, once.
    await second.recover();
    const parent = await eventually(async () => {
      const run = await store.getRun(handle.runId);
      return run?.status === 'completed' && run;
    }, { what: 'the parent to complete' }).catch(() => store.getRun(handle.runId));
    await second.close();
    expect(parent?.status).toBe('completed');
    const taskResults = (await store.readEvents(handle.runId)).filter((e) => e.type === 'tool.completed' && !e.data.agent && e.data.toolName === 'Task');
    expect(taskResults.map((e) => (e.data as { content: string }).content)).toEqual(['wrote out.txt']);
    // The subagent's tokens are counted in the parent's, found again from its stored checkpoint.
    const usageOf = async (id: string) => (await store.loadCheckpoint(id))!.checkpoint.state['usage'] as { inputTokens: number; outputTokens: number };
    const own = (await store.readEvents(handle.runId)).filter((e) => e.type === 'message.completed' && !e.data.agent).map((e) => (e.data as { usage: { inputTokens: number; outputTokens: number } }).usage);
    const child = await usageOf(childId);
    expect(child.inputTokens).toBeGreaterThan(0);
    expect(await usageOf(handle.runId)).toEqual({ inputTokens: own.reduce((a, u) => a + u.inputTokens, 0) + child.inputTokens, outputTokens: own.reduce((a, u) => a + u.outputTokens, 0) + child.outputTokens });
    // One subagent, never a second.
    expect((await store.listRuns({ limit: 10 })).length).toBe(2);
  });

  test('answered in a process that stays up (a server), the subagent finishes and its parent is resumed there at once', async () => {
    const first = await runnerOf();
    const factory = createRunFactory({ store, home: join(dir, 'home') });
    const handle = await first.start('t', await factory.admitRun({ task: 't', surface: 'detached', model: model(), cwd: project, oneTask: true }));
    expect((await handle.outcome).status).toBe('suspended');
    await first.close();
    const childId = childRunId(handle.runId, 'call_task');
    const [ask] = await store.listInteractions({ runId: childId, status: ['pending'] });
    const server = await runnerOf();
    await server.respond(ask!.id, { kind: 'confirm', confirmed: true });
    const parent = await eventually(async () => {
      const run = await store.getRun(handle.runId);
      return run?.status === 'completed' && run;
    }, { what: 'the parent to complete' }).catch(() => store.getRun(handle.runId));
    await server.close();
    expect(parent).toMatchObject({ status: 'completed', finalText: 'parent done' });
    expect((await store.listRuns({ limit: 10 })).length).toBe(2);
  });

  test('after a crash (nothing suspended, leases left to run out), recover resumes both and the answer finishes them', async () => {
    const crashed = await new DurableRunner({ store, runtime: createRunFactory({ store, home: join(dir, 'home') }), idleSuspendMs: 60_000, leaseMs: 150 }).open();
    const factory = createRunFactory({ store, home: join(dir, 'home') });
    const spec = await factory.admitRun({ task: 't', surface: 'detached', model: model(), cwd: project, oneTask: true });
    const handle = await crashed.start('t', spec);
    const childId = childRunId(handle.runId, 'call_task');
    const ask = await eventually(async () => (await store.listInteractions({ runId: childId, status: ['pending'] }))[0], { what: "the subagent's ask" });
    await crashed.close({ suspend: false });
    await store.claimAnswer(ask.id, { requestId: ask.id, kind: 'confirm', confirmed: true, respondedAt: new Date().toISOString() } as never);
    // Both runs are orphans once the crashed runner's leases ran out, not after a guess at how long that takes.
    await eventually(async () => {
      const orphans = await store.listOrphanCandidates(Date.now(), 10);
      return orphans.includes(handle.runId) && orphans.includes(childId);
    }, { what: "the crashed runner's leases to run out" });
    const second = await runnerOf();
    const recovered = await second.recover();
    expect(recovered.resumed).toEqual(expect.arrayContaining([handle.runId, childId]));
    const final = await second.handle(handle.runId)?.outcome;
    await second.close();
    expect(final?.status).toBe('completed');
    expect(final?.messages.find((m) => m.role === 'tool')?.content).toBe('wrote out.txt');
    expect((await store.listRuns({ limit: 10 })).length).toBe(2);
  });

  test('cancelling the parent cancels its subagent', async () => {
    const runner = await new DurableRunner({ store, runtime: createRunFactory({ store, home: join(dir, 'home') }), idleSuspendMs: 60_000 }).open();
    const factory = createRunFactory({ store, home: join(dir, 'home') });
    const spec = await factory.admitRun({ task: 't', surface: 'detached', model: model(), cwd: project, oneTask: true });
    const handle = await runner.start('t', spec);
    const childId = childRunId(handle.runId, 'call_task');
    await eventually(async () => (await store.listInteractions({ runId: childId, status: ['pending'] })).length > 0, { what: "the subagent's ask" });
    await runner.cancel(handle.runId);
    expect((await handle.outcome).status).toBe('cancelled');
    await runner.close();
    expect((await store.getRun(childId))?.status).toBe('cancelled');
  });
});
