import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../events/index.js';
import {
  InteractionAlreadyAnsweredError,
  InteractionCancelledError,
  InteractionExpiredError,
  InteractionNotFoundError,
  type InteractionRequest,
  type InteractionResponse,
} from '../../interaction/index.js';
import { InvalidInputError } from '../../errors/index.js';
import { EventSeqConflictError, LeaseLostError, RunBusyError, StoreVersionError } from '../errors.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, migrate } from '../migrations.js';
import type { SqlDriver } from '../sql/driver.js';
import type { SqlStore } from '../sql-store.js';
import type { ContractBackend } from './contract-backends.js';

export type { ContractBackend } from './contract-backends.js';
import { CHECKPOINT_FORMAT, type Checkpoint, type StoreNotification } from '../types.js';
import { untilPast } from '../../test-support/eventually.js';

let runCounter = 0;
const newRunId = () => `run_contract_${Date.now()}_${++runCounter}`;
const event = (runId: string, seq: number, type: RunEvent['type'] = 'step.started', data: unknown = { step: seq }): RunEvent =>
  ({ seq, runId, type, at: new Date().toISOString(), data }) as RunEvent;
const confirm = (runId: string, id: string, extra: Partial<InteractionRequest> = {}): InteractionRequest =>
  ({ id, runId, kind: 'confirm', title: 'Allow?', createdAt: new Date().toISOString(), ...extra }) as InteractionRequest;
const yes = (id: string, userId: string): InteractionResponse => ({ requestId: id, kind: 'confirm', confirmed: true, userId, respondedAt: new Date().toISOString() });
const checkpoint = (seq: number, messageCount: number, toolHistoryCount = 0, compactions = 0): Checkpoint => ({
  format: CHECKPOINT_FORMAT,
  seq,
  step: seq,
  state: { step: seq, note: 'small' },
  messageCount,
  toolHistoryCount,
  compactions,
});

/** The contract every Store backend must keep; each backend's test file calls this once. */
export function describeStoreContract(backend: ContractBackend): void {
  describe(`Store contract: ${backend.name}`, () => {
    let store: SqlStore;
    let other: SqlStore;
    const newRun = async (owner: string | null = 'A', leaseMs = 60_000) => {
      const id = newRunId();
      await store.createRun({ id, userId: 'alice', sessionId: 'sess1', channel: 'cli', task: 'do it', options: { model: 'scripted:x' } }, owner ? { id: owner, leaseMs } : null);
      return id;
    };

    beforeAll(async () => {
      store = await backend.openFresh();
      other = await backend.openSame();
    });
    afterAll(async () => {
      await other?.close();
      await store?.close();
      await backend.cleanup();
    });

    describe('migrations', () => {
      it('applies every migration on open and reopens without change', async () => {
        expect(await store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
        expect(await other.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      });

      it('refuses a database newer than the code with a clear message, and leaves it untouched', async () => {
        await store.driver.execute("UPDATE sage_meta SET value = '999' WHERE key = 'schema_version'");
        try {
          const opened = backend.openSame();
          await expect(opened).rejects.toBeInstanceOf(StoreVersionError);
          await expect(opened).rejects.toThrow(new RegExp(`schema version 999.*knows versions up to ${LATEST_SCHEMA_VERSION}.*upgrade Sage`));
          expect(await store.schemaVersion()).toBe(999);
        } finally {
          await store.driver.execute("UPDATE sage_meta SET value = ? WHERE key = 'schema_version'", [String(LATEST_SCHEMA_VERSION)]);
        }
      });
    });

    describe('runs and leases', () => {
      it('creates, reads and lists runs with their options', async () => {
        const id = await newRun();
        const run = await store.getRun(id);
        expect(run).toMatchObject({ id, status: 'running', userId: 'alice', sessionId: 'sess1', channel: 'cli', task: 'do it', owner: 'A', options: { model: 'scripted:x' } });
        expect(run!.leaseExpiresAt).not.toBeNull();
        expect((await store.listRuns({ userId: 'alice', status: ['running'] })).map((r) => r.id)).toContain(id);
        expect(await store.listRuns({ userId: 'nobody' })).toEqual([]);
        expect(await store.getRun('missing')).toBeUndefined();
      });

      it('counts runs and waiting requests by user and status, up to the limit, as listing them would', async () => {
        const user = `counted_${newRunId()}`;
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) {
          const id = newRunId();
          ids.push(id);
          await store.createRun({ id, userId: user, sessionId: id, channel: 'cli', task: 't', options: { model: 'scripted:x' } }, { id: 'A', leaseMs: 60_000 });
        }
        await store.write({ runId: ids[0]!, owner: 'A', run: { status: 'completed', release: true } });
        await store.saveInteraction(confirm(ids[1]!, `${ids[1]}:ask`), { owner: 'A', events: [] });
        await store.saveInteraction(confirm(ids[2]!, `${ids[2]}:ask`), { owner: 'A', events: [] });
        await store.claimAnswer(`${ids[2]}:ask`, yes(`${ids[2]}:ask`, 'alice'));
        const inFlight = ['running', 'idle', 'suspended'] as const;
        expect(await store.countRuns({ userId: user, status: inFlight, limit: 100 })).toBe(3);
        expect(await store.countRuns({ userId: user, status: inFlight, limit: 100 })).toBe((await store.listRuns({ userId: user, status: inFlight, limit: 100 })).length);
        expect(await store.countRuns({ userId: user, status: inFlight, limit: 2 })).toBe(2);
        expect(await store.countRuns({ userId: user, limit: 100 })).toBe(4);
        expect(await store.countRuns({ userId: 'nobody', limit: 100 })).toBe(0);
        expect(await store.countInteractions({ userId: user, status: ['pending'], limit: 100 })).toBe(1);
        expect(await store.countInteractions({ userId: user, limit: 100 })).toBe(2);
        expect(await store.countInteractions({ userId: user, limit: 1 })).toBe(1);
        expect(await store.countInteractions({ runId: ids[2]!, status: ['answered'], limit: 100 })).toBe(1);
        expect(await store.countInteractions({ userId: 'nobody', status: ['pending'], limit: 100 })).toBe(0);
      });

      it('lets one instance claim a suspended run, and refuses a second while the lease lives', async () => {
        const id = await newRun();
        await store.write({ runId: id, owner: 'A', run: { status: 'suspended', release: true, pendingInteractionId: 'x' } });
        expect(await store.getRun(id)).toMatchObject({ status: 'suspended', owner: null, pendingInteractionId: 'x' });
        const [a, b] = await Promise.all([store.claimRun(id, 'A', 60_000, ['suspended']), other.claimRun(id, 'B', 60_000, ['suspended'])]);
        expect([a, b].filter(Boolean)).toHaveLength(1);
        expect(await store.claimRun(id, 'C', 60_000, ['suspended', 'running'])).toBeUndefined();
      });

      it('takes over a running run only after its lease expired, and fences the old owner out', async () => {
        const id = await newRun('A', 40);
        expect(await other.claimRun(id, 'B', 60_000, ['running'])).toBeUndefined();
        await untilPast((await store.getRun(id))!.leaseExpiresAt);
        expect(await other.claimRun(id, 'B', 60_000, ['running'])).toMatchObject({ owner: 'B', status: 'running' });
        const late = store.write({ runId: id, owner: 'A', events: [event(id, 1)], checkpoint: checkpoint(1, 0) });
        await expect(late).rejects.toBeInstanceOf(LeaseLostError);
        await expect(late).rejects.toMatchObject({ runId: id, owner: 'A', currentOwner: 'B' });
        expect(await store.readEvents(id)).toEqual([]);
        expect(await store.loadCheckpoint(id)).toBeUndefined();
      });

      it('fences per claim: every claim bumps the epoch, and a write of an older claim of the same owner is refused', async () => {
        const id = await newRun('A', 40);
        const created = await store.getRun(id);
        expect(created!.epoch).toBe(1);
        await store.write({ runId: id, owner: 'A', epoch: 1, events: [event(id, 1)] });
        // The same instance claims the run again (a newer incarnation): the older one is fenced out.
        const again = await store.claimRun(id, 'A', 60_000, ['running']);
        expect(again!.epoch).toBe(2);
        const request = confirm(id, `${id}:ask`);
        const refused = [
          store.write({ runId: id, owner: 'A', epoch: 1, events: [event(id, 2)], checkpoint: checkpoint(2, 0) }),
          store.write({ runId: id, owner: 'A', epoch: 1, toolIntent: { toolCallId: 'c1', toolName: 'Append', input: {} } }),
          store.write({ runId: id, owner: 'A', epoch: 1, run: { status: 'failed', release: true, error: { code: 'x', message: 'late' } } }),
          store.saveInteraction(request, { owner: 'A', epoch: 1, events: [] }),
        ];
        for (const late of await Promise.allSettled(refused)) {
          expect(late.status).toBe('rejected');
          const reason = (late as PromiseRejectedResult).reason as unknown;
          expect(reason).toBeInstanceOf(LeaseLostError);
          expect(reason).toMatchObject({ code: 'lease_lost', runId: id, owner: 'A', currentOwner: 'A', claim: { epoch: 1, currentEpoch: 2 } });
        }
        expect((await store.readEvents(id)).map((e) => e.seq)).toEqual([1]);
        expect(await store.loadCheckpoint(id)).toBeUndefined();
        expect(await store.listToolCalls(id)).toEqual([]);
        expect(await store.getInteraction(request.id)).toBeUndefined();
        expect(await store.getRun(id)).toMatchObject({ status: 'running', owner: 'A', epoch: 2, error: null });
        // The current claim writes; answers and closes by an older claim are refused and change nothing.
        expect(await store.saveInteraction(request, { owner: 'A', epoch: 2, events: [event(id, 2)] })).toBeUndefined();
        await expect(store.claimAnswer(request.id, yes(request.id, 'bob'), { consumed: true, fence: { owner: 'A', epoch: 1 } })).rejects.toBeInstanceOf(LeaseLostError);
        await expect(store.closeInteraction(request.id, 'cancelled', 'late', { owner: 'A', epoch: 1 })).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.getInteraction(request.id)).toMatchObject({ status: 'pending', consumed: false });
        await store.claimAnswer(request.id, yes(request.id, 'bob'), { consumed: true, fence: { owner: 'A', epoch: 2 } });
        // Taking over an expired lease (claimOrphans) and an orphan write are claims too.
        await store.write({ runId: id, owner: 'A', epoch: 2, run: { status: 'running' } });
        await store.driver.execute('UPDATE runs SET lease_expires_at = ? WHERE id = ?', [Date.now() - 1, id]);
        const [taken] = (await other.claimOrphans('B', 60_000, 1000)).filter((r) => r.id === id);
        expect(taken).toMatchObject({ owner: 'B', epoch: 3, options: { model: 'scripted:x' } });
        await store.driver.execute('UPDATE runs SET lease_expires_at = ? WHERE id = ?', [Date.now() - 1, id]);
        await store.appendOrphanEvents(id, (seq) => [event(id, seq, 'run.cancelled', { reason: 'x' })], { status: 'cancelled', closeInteractions: 'cancelled' });
        expect(await store.getRun(id)).toMatchObject({ status: 'cancelled', owner: null, epoch: 4 });
        await expect(store.write({ runId: id, owner: 'B', epoch: 3, events: [event(id, 9)] })).rejects.toBeInstanceOf(LeaseLostError);
      });

      it('skips excluded runs when claiming orphans, and closes pending requests with a finishing write', async () => {
        const dead = await newRun('A', 1);
        await untilPast((await store.getRun(dead))!.leaseExpiresAt);
        expect((await store.claimOrphans('A', 60_000, 1000, { exclude: [dead] })).map((r) => r.id)).not.toContain(dead);
        const id = await newRun('A');
        const request = confirm(id, `${id}:ask`);
        await store.saveInteraction(request, { owner: 'A', epoch: 1, events: [] });
        await store.write({ runId: id, owner: 'A', epoch: 1, run: { status: 'completed', release: true, closeInteractions: 'the run ended (completed)' } });
        expect(await store.getInteraction(request.id)).toMatchObject({ status: 'cancelled', reason: 'the run ended (completed)' });
      });

      it('claims orphans (queued or lease expired) once across instances, and renews only held leases', async () => {
        const queued = await newRun(null);
        const dead = await newRun('dead', 1);
        const alive = await newRun('alive', 60_000);
        await untilPast((await store.getRun(dead))!.leaseExpiresAt);
        const [a, b] = await Promise.all([store.claimOrphans('A', 60_000, 1000), other.claimOrphans('B', 60_000, 1000)]);
        const claimed = [...a, ...b].map((r) => r.id);
        expect(claimed.filter((id) => id === queued || id === dead).sort()).toEqual([queued, dead].sort());
        expect(claimed).not.toContain(alive);
        const mine = a.map((r) => r.id).filter((id) => id === queued || id === dead);
        expect((await store.renewLeases('A', [...mine, alive], 60_000)).sort()).toEqual(mine.sort());
      });
    });

    describe('lease owners (host, pid, process start)', () => {
      const owner = (name: string, host = 'host-a') => ({ owner: name, host, pid: 4242, bootId: 'boot-1', startTime: '987654' });

      it('records who holds a lease, lists a host\'s owners, replaces a registration and forgets one', async () => {
        const tag = newRunId();
        await store.registerOwner(owner(`${tag}:1`, `${tag}-h1`));
        await store.registerOwner({ ...owner(`${tag}:2`, `${tag}-h1`), bootId: null, startTime: null });
        await store.registerOwner(owner(`${tag}:3`, `${tag}-h2`));
        expect((await other.listOwnersOnHost(`${tag}-h1`)).sort((x, y) => x.owner.localeCompare(y.owner))).toEqual([
          owner(`${tag}:1`, `${tag}-h1`),
          { ...owner(`${tag}:2`, `${tag}-h1`), bootId: null, startTime: null },
        ]);
        await store.registerOwner({ ...owner(`${tag}:1`, `${tag}-h1`), pid: 77, startTime: '5' });
        expect(await other.getOwners([`${tag}:1`, `${tag}:3`, `${tag}:missing`])).toEqual(
          expect.arrayContaining([{ ...owner(`${tag}:1`, `${tag}-h1`), pid: 77, startTime: '5' }, owner(`${tag}:3`, `${tag}-h2`)]),
        );
        expect(await other.getOwners([`${tag}:1`, `${tag}:3`, `${tag}:missing`])).toHaveLength(2);
        await store.forgetOwner(`${tag}:1`);
        expect((await other.listOwnersOnHost(`${tag}-h1`)).map((o) => o.owner)).toEqual([`${tag}:2`]);
        expect(await other.getOwners([])).toEqual([]);
      });

      it("ends a dead owner's leases at once: its running and idle runs are orphans, nobody else's", async () => {
        const dead = `dead_${newRunId()}`;
        const alive = `alive_${newRunId()}`;
        await store.registerOwner(owner(dead));
        await store.registerOwner(owner(alive));
        const running = await newRun(dead, 60_000);
        const idle = await newRun(dead, 60_000);
        await store.write({ runId: idle, owner: dead, epoch: 1, run: { status: 'idle' } });
        const released = await newRun(dead, 60_000);
        await store.write({ runId: released, owner: dead, epoch: 1, run: { status: 'suspended', release: true } });
        const others = await newRun(alive, 60_000);
        expect(await store.listOrphanCandidates(Date.now(), 1000)).not.toContain(running);

        expect((await other.expireOwner(dead)).sort()).toEqual([running, idle].sort());
        expect(await store.getOwners([dead])).toEqual([]);
        const candidates = await store.listOrphanCandidates(Date.now(), 1000);
        expect(candidates).toEqual(expect.arrayContaining([running, idle]));
        expect(candidates).not.toContain(others);
        const claimed = (await store.claimOrphans('B', 60_000, 1000)).map((r) => r.id);
        expect(claimed).toEqual(expect.arrayContaining([running, idle]));
        expect(claimed).not.toContain(others);
        expect(claimed).not.toContain(released);
        expect(await store.getRun(running)).toMatchObject({ owner: 'B', status: 'running' });
        expect(await store.getRun(others)).toMatchObject({ owner: alive });
        // The dead owner's late renewal finds nothing of its own.
        expect(await store.renewLeases(dead, [running, idle], 60_000)).toEqual([]);
      });

      it('keeps runs whose owner never registered (written before run_owners) to their lease', async () => {
        const legacy = `legacy_${newRunId()}`;
        const id = await newRun(legacy, 60_000);
        expect(await store.getOwners([legacy])).toEqual([]);
        expect(await store.expireOwner(legacy)).toEqual([id]);
        expect(await store.claimRun(id, 'B', 60_000, ['running'])).toMatchObject({ owner: 'B' });
      });
    });

    describe('event log and checkpoints', () => {
      it('appends events and replays them from a seq', async () => {
        const id = await newRun();
        await store.write({ runId: id, owner: 'A', events: [event(id, 1), event(id, 2), event(id, 3)] });
        await store.write({ runId: id, owner: 'A', events: [event(id, 4, 'message.delta', { text: 'hé 🙂' })] });
        expect((await store.readEvents(id)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
        expect((await store.readEvents(id, { afterSeq: 2 })).map((e) => e.seq)).toEqual([3, 4]);
        expect((await store.readEvents(id, { afterSeq: 0, limit: 1 })).map((e) => e.seq)).toEqual([1]);
        expect((await store.readEvents(id, { afterSeq: 3 }))[0]).toMatchObject({ runId: id, type: 'message.delta', data: { text: 'hé 🙂' } });
        expect(await store.lastEventSeq(id)).toBe(4);
      });

      it('refuses a seq already logged and rolls the whole write back', async () => {
        const id = await newRun();
        await store.write({ runId: id, owner: 'A', events: [event(id, 1)] });
        const dup = store.write({ runId: id, owner: 'A', events: [event(id, 1)], checkpoint: checkpoint(1, 0) });
        await expect(dup).rejects.toBeInstanceOf(EventSeqConflictError);
        expect(await store.loadCheckpoint(id)).toBeUndefined();
      });

      it('rebuilds a checkpoint from the message and tool-history logs, and rewrites the log after a compaction', async () => {
        const id = await newRun();
        await store.write({ runId: id, owner: 'A', events: [event(id, 1)], messages: { from: 0, items: [{ role: 'user', content: 'hi' }] }, checkpoint: checkpoint(1, 1) });
        await store.write({
          runId: id,
          owner: 'A',
          events: [event(id, 2)],
          messages: { from: 1, items: [{ role: 'assistant', content: 'a' }] },
          toolHistory: { from: 0, items: [{ toolCallId: 'c1' }] },
          checkpoint: checkpoint(2, 2, 1),
        });
        let loaded = await store.loadCheckpoint(id);
        expect(loaded).toMatchObject({ checkpoint: { seq: 2, messageCount: 2, toolHistoryCount: 1, state: { step: 2 } }, lastSeq: 2 });
        expect(loaded!.messages).toEqual([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'a' }]);
        expect(loaded!.toolHistory).toEqual([{ toolCallId: 'c1' }]);
        await store.write({ runId: id, owner: 'A', events: [event(id, 3)], messages: { from: 0, items: [{ role: 'user', content: 'summary' }], replace: true }, checkpoint: checkpoint(3, 1, 1, 1) });
        loaded = await store.loadCheckpoint(id);
        expect(loaded!.messages).toEqual([{ role: 'user', content: 'summary' }]);
        expect(loaded!.checkpoint.compactions).toBe(1);
      });
    });

    describe('tool intents', () => {
      it('records an intent before the side effect, then its result, or marks it interrupted', async () => {
        const id = await newRun();
        await store.write({ runId: id, owner: 'A', toolIntent: { toolCallId: 'c1', toolName: 'Append', input: { line: 'x' } } });
        await store.write({ runId: id, owner: 'A', toolIntent: { toolCallId: 'c2', toolName: 'Append', input: { line: 'y' } } });
        await store.write({ runId: id, owner: 'A', toolResults: [{ toolCallId: 'c1', result: { content: 'ok', isError: false } }], interruptedToolCalls: ['c2'] });
        const calls = await store.listToolCalls(id);
        expect(calls.find((c) => c.toolCallId === 'c1')).toMatchObject({ status: 'completed', result: { content: 'ok', isError: false }, input: { line: 'x' } });
        expect(calls.find((c) => c.toolCallId === 'c2')).toMatchObject({ status: 'interrupted', result: null });
        await store.write({ runId: id, owner: 'A', toolIntent: { toolCallId: 'c3', toolName: 'Append', input: { line: 'z' } } });
        // What a resume looks at: the calls without a result (started or interrupted), not every call of the run.
        expect((await store.listToolCalls(id, { unfinished: true })).map((c) => [c.toolCallId, c.status])).toEqual([
          ['c2', 'interrupted'],
          ['c3', 'started'],
        ]);
      });

      it('reads what a resume needs in one read: the run, its checkpoint and logs, its last seq, its unfinished calls', async () => {
        expect(await store.loadRunForResume('run_contract_missing')).toBeUndefined();
        const id = await newRun();
        expect(await store.loadRunForResume(id)).toEqual({ run: await store.getRun(id), checkpoint: undefined, lastSeq: 0, unfinishedCalls: [] });
        await store.write({ runId: id, owner: 'A', events: [event(id, 1)], toolIntent: { toolCallId: 'c1', toolName: 'Append', input: { line: 'x' } } });
        expect(await store.loadRunForResume(id)).toMatchObject({ checkpoint: undefined, lastSeq: 1 });
        await store.write({
          runId: id,
          owner: 'A',
          events: [event(id, 2)],
          messages: { from: 0, items: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'a' }] },
          toolHistory: { from: 0, items: [{ toolCallId: 'c1' }] },
          checkpoint: checkpoint(2, 2, 1),
          toolResults: [{ toolCallId: 'c1', result: { content: 'ok', isError: false } }],
        });
        await store.write({ runId: id, owner: 'A', toolIntent: { toolCallId: 'c2', toolName: 'Append', input: { line: 'y', n: 2 } } });
        await store.write({ runId: id, owner: 'A', toolIntent: { toolCallId: 'c3', toolName: 'Ask', input: {} } });
        await store.saveInteraction(confirm(id, `${id}:c3:interact:0`, { toolCallId: 'c3' }), { owner: 'A', events: [event(id, 3)] });
        await store.write({ runId: id, owner: 'A', interruptedToolCalls: ['c2'], events: [event(id, 4)], run: { status: 'suspended', release: true } });
        const state = await other.loadRunForResume(id);
        // The same as the reads it stands for, events logged past the checkpoint included.
        expect(state).toEqual({
          run: await other.getRun(id),
          checkpoint: await other.loadCheckpoint(id),
          lastSeq: 4,
          unfinishedCalls: await other.listToolCalls(id, { unfinished: true }),
        });
        expect(state!.run).toMatchObject({ status: 'suspended', owner: null, pendingInteractionId: `${id}:c3:interact:0`, options: { model: 'scripted:x' } });
        expect(state!.checkpoint).toMatchObject({ checkpoint: { seq: 2, messageCount: 2, toolHistoryCount: 1 }, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'a' }], toolHistory: [{ toolCallId: 'c1' }], lastSeq: 4 });
        expect(state!.unfinishedCalls.map((c) => [c.toolCallId, c.status, c.waiting, c.input])).toEqual([
          ['c2', 'interrupted', false, { line: 'y', n: 2 }],
          ['c3', 'started', true, {}],
        ]);
      });

      it('marks a call waiting on its first ask, and past it once the answer reached running code', async () => {
        const id = await newRun();
        await store.write({ runId: id, owner: 'A', toolIntent: { toolCallId: 'c1', toolName: 'Ask', input: {} } });
        await store.saveInteraction(confirm(id, `${id}:c1:interact:0`, { toolCallId: 'c1' }), { owner: 'A', events: [] });
        expect((await store.listToolCalls(id))[0]).toMatchObject({ waiting: true, passedAsk: false });
        await store.claimAnswer(`${id}:c1:interact:0`, yes(`${id}:c1:interact:0`, 'bob'));
        expect((await store.listToolCalls(id))[0]).toMatchObject({ waiting: true, passedAsk: false });
        await store.saveInteraction(confirm(id, `${id}:c1:interact:0`, { toolCallId: 'c1' }));
        expect((await store.listToolCalls(id))[0]).toMatchObject({ waiting: false, passedAsk: true });
      });
    });

    describe('ids by prefix', () => {
      const create = (id: string) => store.createRun({ id, userId: 'alice', sessionId: id, channel: 'cli', task: 't', options: { model: 'scripted:x' } }, null);

      it('finds run and request ids that start with a prefix exactly: case-sensitive, % and _ literal, in id order, up to the limit', async () => {
        const base = `pfx_${Date.now()}`;
        for (const tail of ['a1', 'a2', 'A3', 'b_1', 'bx1', '%9']) await create(`${base}${tail}`);
        expect(await store.findRunIds(`${base}a`, 10)).toEqual([`${base}a1`, `${base}a2`]);
        expect(await store.findRunIds(`${base}A`, 10)).toEqual([`${base}A3`]);
        // `_` and `%` are not wildcards: b_ does not match bx1, and % matches only itself.
        expect(await store.findRunIds(`${base}b_`, 10)).toEqual([`${base}b_1`]);
        expect(await store.findRunIds(`${base}%`, 10)).toEqual([`${base}%9`]);
        expect(await store.findRunIds(`${base}`, 2)).toHaveLength(2);
        expect(await store.findRunIds(`${base}z`, 10)).toEqual([]);
        // A backslash in the prefix is a plain character too, not an escape.
        expect(await store.findRunIds(`${base}\\`, 10)).toEqual([]);

        const runId = `${base}a1`;
        await store.saveInteraction(confirm(runId, `${runId}:c1:permission`));
        await store.saveInteraction(confirm(runId, `${runId}:c2:permission`));
        expect(await store.findInteractionIds(`${runId}:c`, 10)).toEqual([`${runId}:c1:permission`, `${runId}:c2:permission`]);
        expect(await store.findInteractionIds(`${runId}:C`, 10)).toEqual([]);
        expect(await store.findInteractionIds(`${runId}:_1`, 10)).toEqual([]);
        expect(await store.findInteractionIds(`${runId}:c2`, 10)).toEqual([`${runId}:c2:permission`]);
      });
    });

    describe('interactions', () => {
      it('commits a request, reports it pending when asked again, and hands the answer over once', async () => {
        const id = await newRun();
        const iid = `${id}:c1:permission`;
        await expect(store.saveInteraction(confirm(id, iid), { owner: 'A', events: [event(id, 1, 'interaction.requested', { request: {} })] })).resolves.toBeUndefined();
        expect(await store.readEvents(id)).toHaveLength(1);
        expect(await store.saveInteraction(confirm(id, iid))).toMatchObject({ status: 'pending', request: { id: iid } });
        const record = await store.claimAnswer(iid, yes(iid, 'bob'));
        expect(record).toMatchObject({ status: 'answered', answeredBy: 'bob', consumed: false, response: { confirmed: true } });
        expect(await store.saveInteraction(confirm(id, iid))).toMatchObject({ status: 'answered', response: { userId: 'bob' }, announce: true });
        expect(await store.saveInteraction(confirm(id, iid))).toMatchObject({ status: 'answered', announce: false });
        expect((await store.listInteractions({ runId: id })).map((i) => i.id)).toEqual([iid]);
        expect(await store.listInteractions({ runId: id, status: ['pending'] })).toEqual([]);
        expect((await store.listInteractions({ userId: 'alice', status: ['answered'] })).map((i) => i.id)).toContain(iid);
      });

      it('refuses a second answer with who answered and when', async () => {
        const id = await newRun();
        const iid = `${id}:c1:permission`;
        await store.saveInteraction(confirm(id, iid));
        const first = await store.claimAnswer(iid, yes(iid, 'bob'));
        const second = other.claimAnswer(iid, yes(iid, 'carol'));
        await expect(second).rejects.toBeInstanceOf(InteractionAlreadyAnsweredError);
        await expect(second).rejects.toMatchObject({ code: 'interaction_already_answered', interactionId: iid, answeredBy: 'bob', answeredAt: first.answeredAt });
        await expect(store.claimAnswer('nope', yes('nope', 'x'))).rejects.toBeInstanceOf(InteractionNotFoundError);
      });

      it('refuses an answer after expiry, and expires due requests with a reason written for the model', async () => {
        const id = await newRun();
        const created = new Date(Date.now() - 5000);
        const past = { createdAt: created.toISOString(), expiresAt: new Date(Date.now() - 1000).toISOString() };
        await store.saveInteraction(confirm(id, `${id}:a`, past));
        await expect(store.claimAnswer(`${id}:a`, yes(`${id}:a`, 'bob'))).rejects.toBeInstanceOf(InteractionExpiredError);
        expect(await store.getInteraction(`${id}:a`)).toMatchObject({ status: 'expired' });
        await store.saveInteraction(confirm(id, `${id}:b`, past));
        const expired = await store.expireDue();
        expect(expired.map((e) => e.id)).toContain(`${id}:b`);
        expect(expired.find((e) => e.id === `${id}:b`)!.reason).toMatch(/^no one answered within \d+(\.\d)? s$/);
        expect(await store.saveInteraction(confirm(id, `${id}:b`))).toMatchObject({ status: 'expired', announce: true });
      });

      it('closes requests once, and cancels a finished run\'s pending requests so late answers are refused', async () => {
        const id = await newRun();
        await store.saveInteraction(confirm(id, `${id}:a`));
        await store.saveInteraction(confirm(id, `${id}:b`));
        expect(await store.closeInteraction(`${id}:a`, 'cancelled', 'the run was cancelled')).toBe(true);
        expect(await store.closeInteraction(`${id}:a`, 'expired', 'late')).toBe(false);
        expect(await store.closeRunInteractions(id, 'the run ended')).toEqual([`${id}:b`]);
        await expect(store.claimAnswer(`${id}:b`, yes(`${id}:b`, 'bob'))).rejects.toBeInstanceOf(InteractionCancelledError);
        await expect(store.claimAnswer(`${id}:b`, yes(`${id}:b`, 'bob'))).rejects.toMatchObject({ reason: 'the run ended' });
      });

      it('has exactly one winner in each of 1,000 concurrent double-answer races across two connections', async () => {
        const id = await newRun();
        const ids = Array.from({ length: 1000 }, (_, i) => `${id}:race:${i}`);
        for (let i = 0; i < ids.length; i += 100) await Promise.all(ids.slice(i, i + 100).map((iid) => store.saveInteraction(confirm(id, iid))));
        const results = await Promise.all(
          ids.map((iid) =>
            Promise.allSettled([store.claimAnswer(iid, yes(iid, 'one')), other.claimAnswer(iid, yes(iid, 'two'))]),
          ),
        );
        let winners = 0;
        for (const pair of results) {
          const won = pair.filter((r) => r.status === 'fulfilled');
          const lost = pair.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
          expect(won).toHaveLength(1);
          expect(lost[0]!.reason).toBeInstanceOf(InteractionAlreadyAnsweredError);
          winners += won.length;
        }
        expect(winners).toBe(1000);
        const stored = await store.listInteractions({ runId: id, limit: 2000 });
        expect(stored.filter((i) => i.status === 'answered')).toHaveLength(1000);
      }, 60_000);
    });

    describe('what a run waits for (status idle, pendingInteractionId)', () => {
      const nextMessage = (runId: string, id: string): InteractionRequest =>
        ({ id, runId, kind: 'input', title: 'Your reply', metadata: { purpose: 'next-message' }, createdAt: new Date().toISOString() }) as InteractionRequest;
      const reply = (id: string, text: string): InteractionResponse => ({ requestId: id, kind: 'input', text, userId: 'alice', respondedAt: new Date().toISOString() });

      it('names an approval the run waits for in memory in the same write that saves it, and clears it once answered', async () => {
        const id = await newRun();
        const request = confirm(id, `${id}:c1:permission`);
        await store.saveInteraction(request, { owner: 'A', epoch: 1, events: [event(id, 1)] });
        // Another connection (another process) sees it at once: status stays running, the request is named.
        expect(await other.getRun(id)).toMatchObject({ status: 'running', owner: 'A', pendingInteractionId: request.id });
        await store.claimAnswer(request.id, yes(request.id, 'alice'), { consumed: true, fence: { owner: 'A', epoch: 1 } });
        expect(await other.getRun(id)).toMatchObject({ status: 'running', pendingInteractionId: null });
      });

      it('makes a run idle while its next-message ask is pending, and running again once answered', async () => {
        const id = await newRun();
        const seen: StoreNotification[] = [];
        const unsubscribe = await store.subscribe(id, (n) => seen.push(n));
        const ask = nextMessage(id, `${id}:input:1`);
        await store.saveInteraction(ask, { owner: 'A', epoch: 1, events: [] });
        expect(await store.getRun(id)).toMatchObject({ status: 'idle', owner: 'A', pendingInteractionId: ask.id, finishedAt: null });
        expect((await store.listRuns({ status: ['idle'], userId: 'alice' })).map((r) => r.id)).toContain(id);
        // Asked again by a resumed loop (still pending): the same answer.
        expect(await store.saveInteraction(ask, { owner: 'A', epoch: 1, events: [] })).toMatchObject({ status: 'pending' });
        expect(await store.getRun(id)).toMatchObject({ status: 'idle', pendingInteractionId: ask.id });
        // An idle run in memory keeps its lease like a running one.
        expect(await store.renewLeases('A', [id], 60_000)).toEqual([id]);
        await other.claimAnswer(ask.id, reply(ask.id, 'next, please'));
        expect(await store.getRun(id)).toMatchObject({ status: 'running', owner: 'A', pendingInteractionId: null });
        const statuses = () => seen.filter((n) => n.type === 'run').map((n) => (n as { status: string }).status);
        // Postgres delivers through LISTEN, in commit order: once `running` is heard, all before it were.
        await waitFor(() => statuses().includes('running'));
        await unsubscribe();
        expect(statuses()).toEqual(['idle', 'running']);
      });

      it('when one of two parallel asks is settled, names the other; a closed or expired ask settles like an answer', async () => {
        const id = await newRun();
        const first = confirm(id, `${id}:c1:permission`);
        const second = confirm(id, `${id}:c2:permission`, { expiresAt: new Date(Date.now() + 30).toISOString() });
        await store.saveInteraction(first, { owner: 'A', epoch: 1, events: [] });
        // The second ask is the later one: stored after the first's creation time.
        await untilPast((await store.getInteraction(first.id))!.createdAt);
        await store.saveInteraction(second, { owner: 'A', epoch: 1, events: [] });
        expect((await store.getRun(id))!.pendingInteractionId).toBe(second.id);
        await store.closeInteraction(first.id, 'cancelled', 'the tool was stopped', { owner: 'A', epoch: 1 });
        expect((await store.getRun(id))!.pendingInteractionId).toBe(second.id);
        await untilPast(second.expiresAt);
        expect((await other.expireDue()).map((r) => r.id)).toContain(second.id);
        expect(await store.getRun(id)).toMatchObject({ status: 'running', pendingInteractionId: null });
      });

      it('a released idle run keeps its ask named after an answer (the sweep finds it), is claimed from idle, and is nobody\'s orphan', async () => {
        const id = await newRun();
        const ask = nextMessage(id, `${id}:input:1`);
        await store.saveInteraction(ask, { owner: 'A', epoch: 1, events: [] });
        await store.write({ runId: id, owner: 'A', epoch: 1, run: { status: 'idle', release: true, pendingInteractionId: ask.id } });
        expect(await store.getRun(id)).toMatchObject({ status: 'idle', owner: null, pendingInteractionId: ask.id });
        expect((await store.claimOrphans('B', 60_000, 1000)).map((r) => r.id)).not.toContain(id);
        await other.claimAnswer(ask.id, reply(ask.id, 'go on'));
        expect(await store.getRun(id)).toMatchObject({ status: 'idle', owner: null, pendingInteractionId: ask.id });
        expect(await store.claimRun(id, 'B', 60_000, ['suspended', 'idle'])).toMatchObject({ status: 'running', owner: 'B', pendingInteractionId: null, epoch: 2 });
        // A re-ask that finds the answer does not name it again.
        expect(await store.saveInteraction(ask, { owner: 'B', epoch: 2, events: [] })).toMatchObject({ status: 'answered' });
        expect(await store.getRun(id)).toMatchObject({ status: 'running', pendingInteractionId: null });
      });

      it('an idle run held by an instance whose lease expired is claimed as an orphan', async () => {
        const id = await newRun('A', 60_000);
        await store.saveInteraction(nextMessage(id, `${id}:input:1`), { owner: 'A', epoch: 1, events: [] });
        expect((await other.claimOrphans('B', 60_000, 1000)).map((r) => r.id)).not.toContain(id);
        await store.driver.execute('UPDATE runs SET lease_expires_at = ? WHERE id = ?', [Date.now() - 1, id]);
        const [taken] = (await other.claimOrphans('B', 60_000, 1000)).filter((r) => r.id === id);
        expect(taken).toMatchObject({ status: 'idle', owner: 'B', epoch: 2 });
      });
    });

    describe('one commit per approval: a request with the release, an answer with the claim', () => {
      /** A run released (suspended) at claim 1 while `ask` waits, committed as one write. */
      const released = async () => {
        const id = await newRun();
        const ask = confirm(id, `${id}:c1:permission`, { toolCallId: 'c1' } as Partial<InteractionRequest>);
        await store.write({ runId: id, owner: 'A', epoch: 1, toolIntent: { toolCallId: 'c0', toolName: 'Bash', input: {} } });
        await store.write({ runId: id, owner: 'A', epoch: 1, events: [event(id, 1, 'interaction.requested', { request: ask })], asks: [ask], run: { status: 'suspended', release: true, pendingInteractionId: ask.id } });
        return { id, ask };
      };

      it('commits a request with the write that releases the run: pending, named, answerable from another connection', async () => {
        const { id, ask } = await released();
        expect(await other.getRun(id)).toMatchObject({ status: 'suspended', owner: null, pendingInteractionId: ask.id });
        expect(await other.getInteraction(ask.id)).toMatchObject({ status: 'pending', runId: id });
        // A request already stored (a resumed run asking again) is left as it is.
        await store.claimRun(id, 'A', 60_000, ['suspended']);
        await store.write({ runId: id, owner: 'A', epoch: 2, asks: [{ ...ask, title: 'changed' }] });
        expect(await other.getInteraction(ask.id)).toMatchObject({ status: 'pending', request: { title: 'Allow?' } });
        expect((await other.getRun(id))!.pendingInteractionId).toBe(ask.id);
      });

      it('claims a released run and records its answer with the resumed write: the intent, the answer consumed, the claim, in one transaction', async () => {
        const { id, ask } = await released();
        await other.write({
          runId: id,
          owner: 'B',
          epoch: 2,
          claim: { epoch: 1, leaseMs: 60_000, answer: { interactionId: ask.id, response: yes(ask.id, 'bob') } },
          events: [event(id, 2, 'interaction.answered', { interactionId: ask.id })],
          toolIntent: { toolCallId: 'c1', toolName: 'Bash', input: { command: 'ls' } },
        });
        expect(await store.getRun(id)).toMatchObject({ status: 'running', owner: 'B', epoch: 2, pendingInteractionId: null });
        expect(await store.getInteraction(ask.id)).toMatchObject({ status: 'answered', consumed: true, answeredBy: 'bob' });
        expect((await store.listToolCalls(id)).find((c) => c.toolCallId === 'c1')).toMatchObject({ status: 'started' });
        expect((await store.readEvents(id)).map((e) => e.seq)).toEqual([1, 2]);
      });

      it('refuses the whole write when the run was claimed first, or the request answered first: nothing of it lands', async () => {
        const first = await released();
        await store.claimRun(first.id, 'A', 60_000, ['suspended']);
        const late = (runId: string, interactionId: string) =>
          other.write({ runId, owner: 'B', epoch: 2, claim: { epoch: 1, leaseMs: 60_000, answer: { interactionId, response: yes(interactionId, 'bob') } }, events: [event(runId, 2)] });
        await expect(late(first.id, first.ask.id)).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.getInteraction(first.ask.id)).toMatchObject({ status: 'pending' });

        const second = await released();
        await store.claimAnswer(second.ask.id, yes(second.ask.id, 'alice'));
        await expect(late(second.id, second.ask.id)).rejects.toBeInstanceOf(InteractionAlreadyAnsweredError);
        // The run stays released (its claim rolled back with the refused answer), the log unchanged.
        expect(await store.getRun(second.id)).toMatchObject({ status: 'suspended', owner: null, epoch: 1 });
        expect((await store.readEvents(second.id)).map((e) => e.seq)).toEqual([1]);
        expect(await store.getInteraction(second.ask.id)).toMatchObject({ answeredBy: 'alice' });
      });
    });

    describe('text the database cannot keep', () => {
      it('refuses a NUL character or an unpaired surrogate with InvalidInputError, and writes nothing', async () => {
        for (const bad of ['before\u0000after', 'lone \ud800 high', 'lone \udc00 low']) {
          const id = newRunId();
          const create = store.createRun({ id, userId: 'alice', sessionId: 's', channel: 'cli', task: bad, options: { model: 'scripted:x' } }, null);
          await expect(create).rejects.toBeInstanceOf(InvalidInputError);
          await expect(create).rejects.toMatchObject({ code: 'invalid_input' });
          expect(await store.getRun(id)).toBeUndefined();
          await expect(store.addUserPermission({ userId: 'alice', rule: `Bash(${bad})`, behavior: 'allow', createdBy: 'alice' })).rejects.toBeInstanceOf(InvalidInputError);
          expect((await store.listUserPermissions('alice')).map((p) => p.rule)).not.toContain(`Bash(${bad})`);
        }
        // Inside JSON bodies both are escaped, so they are kept as sent.
        const id = await newRun();
        const request = confirm(id, `${id}:nul`, { title: 'a\u0000b \ud800' });
        await store.saveInteraction(request);
        expect((await store.getInteraction(`${id}:nul`))!.request.title).toBe('a\u0000b \ud800');
      });
    });

    describe('requests by id', () => {
      it('lists only the named requests, filtered by status, however many are named', async () => {
        const id = await newRun();
        const ids = Array.from({ length: 1200 }, (_, i) => `${id}:many:${i}`);
        for (let i = 0; i < ids.length; i += 200) await Promise.all(ids.slice(i, i + 200).map((iid) => store.saveInteraction(confirm(id, iid))));
        await other.claimAnswer(ids[3]!, yes(ids[3]!, 'bob'));
        await other.claimAnswer(ids[1100]!, yes(ids[1100]!, 'bob'));
        await other.closeInteraction(ids[700]!, 'expired', 'late');
        const settled = await store.listInteractions({ ids: [...ids, 'no-such-id'], status: ['answered', 'expired', 'cancelled'] });
        expect(settled.map((i) => i.id).sort()).toEqual([ids[3]!, ids[700]!, ids[1100]!].sort());
        expect(await store.listInteractions({ ids: [] })).toEqual([]);
        expect((await store.listInteractions({ ids: ids.slice(0, 150) })).length).toBe(150);
      });

      it('lists only the answers that may remember a rule for the run (remembersForRun)', async () => {
        const id = await newRun();
        for (const n of ['once', 'session', 'project', 'denied']) await store.saveInteraction(confirm(id, `${id}:${n}`));
        await store.claimAnswer(`${id}:once`, yes(`${id}:once`, 'bob'));
        await store.claimAnswer(`${id}:session`, { ...yes(`${id}:session`, 'bob'), remember: 'session', rule: 'Bash(npm test)' });
        await store.claimAnswer(`${id}:project`, { ...yes(`${id}:project`, 'bob'), remember: 'project' });
        await store.claimAnswer(`${id}:denied`, { ...yes(`${id}:denied`, 'bob'), confirmed: false });
        const remembering = await store.listInteractions({ runId: id, status: ['answered'], remembersForRun: true });
        expect(remembering.map((i) => [i.id, i.response?.remember])).toEqual([[`${id}:session`, 'session']]);
        expect((await store.listInteractions({ runId: id, status: ['answered'] })).length).toBe(4);
      });
    });

    describe('notifications', () => {
      it('tells subscribers of a run and of all runs after commit, never for a rolled-back write', async () => {
        const id = await newRun();
        const forRun: StoreNotification[] = [];
        const forAll: StoreNotification[] = [];
        const offRun = await other.subscribe(id, (n) => forRun.push(n));
        const offAll = await other.subscribe('*', (n) => forAll.push(n));
        await store.write({ runId: id, owner: 'A', events: [event(id, 1)] });
        await expect(store.write({ runId: id, owner: 'A', events: [event(id, 1)] })).rejects.toBeInstanceOf(EventSeqConflictError);
        await store.saveInteraction(confirm(id, `${id}:n`));
        await store.publish({ type: 'wake', runId: id, reason: 'test' });
        await waitFor(() => forRun.length >= 3);
        expect(forRun.filter((n) => n.type === 'events')).toEqual([{ type: 'events', runId: id, seq: 1, types: ['step.started'] }]);
        expect(forRun).toContainEqual({ type: 'interaction', runId: id, interactionId: `${id}:n`, status: 'pending' });
        expect(forRun).toContainEqual({ type: 'wake', runId: id, reason: 'test' });
        await waitFor(() => forAll.some((n) => n.type === 'wake' && n.runId === id));
        await offRun();
        await offAll();
      });

      it("names a batch's event types once each, and a next-message ask as one", async () => {
        // A chat hub reads only batches with something to show, and the ask only if the chat queued messages.
        const id = await newRun();
        const seen: StoreNotification[] = [];
        const off = await other.subscribe(id, (n) => seen.push(n));
        await store.write({ runId: id, owner: 'A', events: [event(id, 1), event(id, 2, 'message.completed', { text: 'hi' }), event(id, 3)] });
        await store.saveInteraction({ id: `${id}:next`, runId: id, kind: 'input', title: 'Next message', metadata: { purpose: 'next-message' }, createdAt: new Date().toISOString() } as InteractionRequest);
        await store.saveInteraction(confirm(id, `${id}:c`));
        await waitFor(() => seen.filter((n) => n.type === 'interaction').length >= 2);
        expect(seen.filter((n) => n.type === 'events')).toEqual([{ type: 'events', runId: id, seq: 3, types: ['step.started', 'message.completed'] }]);
        expect(seen).toContainEqual({ type: 'interaction', runId: id, interactionId: `${id}:next`, status: 'pending', nextMessage: true });
        expect(seen).toContainEqual({ type: 'interaction', runId: id, interactionId: `${id}:c`, status: 'pending' });
        await off();
      });
    });

    describe('orphan writes', () => {
      it('appends events to a run nobody drives, continuing its seqs, and refuses a run a live instance holds', async () => {
        const id = await newRun();
        await store.write({ runId: id, owner: 'A', events: [event(id, 1), event(id, 2)] });
        await expect(store.appendOrphanEvents(id, (seq) => [event(id, seq)])).rejects.toBeInstanceOf(RunBusyError);
        await store.write({ runId: id, owner: 'A', run: { status: 'suspended', release: true } });
        const written = await store.appendOrphanEvents(id, (seq) => [event(id, seq, 'run.cancelled', { reason: 'by hand' })], { status: 'cancelled' });
        expect(written.map((e) => e.seq)).toEqual([3]);
        expect(await store.getRun(id)).toMatchObject({ status: 'cancelled', owner: null });
        expect((await store.getRun(id))!.finishedAt).not.toBeNull();
      });
    });

    describe('user permissions and audit', () => {
      it('keeps per-user allow and deny rules once each, and removes them', async () => {
        await store.addUserPermission({ userId: 'u1', rule: 'Bash(npm test:*)', behavior: 'allow', createdBy: 'u1' });
        await store.addUserPermission({ userId: 'u1', rule: 'Bash(npm test:*)', behavior: 'allow', createdBy: 'u1' });
        await store.addUserPermission({ userId: 'u1', rule: 'Bash(rm:*)', behavior: 'deny', createdBy: null });
        expect((await other.listUserPermissions('u1')).map((p) => [p.rule, p.behavior])).toEqual([
          ['Bash(npm test:*)', 'allow'],
          ['Bash(rm:*)', 'deny'],
        ]);
        expect(await store.removeUserPermission('u1', 'Bash(rm:*)')).toBe(1);
        expect(await store.listUserPermissions('u1')).toHaveLength(1);
        expect(await store.listUserPermissions('u2')).toEqual([]);
      });

      it('appends audit entries and reads them by run and user', async () => {
        const at = new Date().toISOString();
        await store.appendAudit({ at, runId: 'r-audit', userId: 'u1', toolCallId: 'c1', toolName: 'Bash', behavior: 'deny', reason: 'rule', source: 'rule', rule: 'Bash(rm:*)', data: { inputHash: 'abc' } });
        await store.appendAudit({ at, runId: 'r-audit', userId: 'u2', toolCallId: 'c2', toolName: 'Read', behavior: 'allow', reason: 'ro', source: 'default', rule: null, data: null });
        expect((await store.listAudit({ runId: 'r-audit' })).map((a) => a.toolCallId)).toEqual(['c1', 'c2']);
        expect(await store.listAudit({ runId: 'r-audit', userId: 'u1' })).toEqual([
          { at, runId: 'r-audit', userId: 'u1', toolCallId: 'c1', toolName: 'Bash', behavior: 'deny', reason: 'rule', source: 'rule', rule: 'Bash(rm:*)', data: { inputHash: 'abc' } },
        ]);
      });
    });

    describe('retention', () => {
      it('prunes finished runs older than the cut-off with everything they own, and keeps the rest', async () => {
        const done = await newRun();
        const live = await newRun();
        await store.write({ runId: done, owner: 'A', events: [event(done, 1)], messages: { from: 0, items: [{}] }, checkpoint: checkpoint(1, 1) });
        await store.saveInteraction(confirm(done, `${done}:x`));
        await store.write({ runId: done, owner: 'A', run: { status: 'completed', release: true } });
        await store.write({ runId: live, owner: 'A', events: [event(live, 1)] });
        const result = await store.prune({ olderThan: new Date(Date.now() + 1000) });
        expect(result.runs).toBeGreaterThanOrEqual(1);
        expect(await store.getRun(done)).toBeUndefined();
        expect(await store.readEvents(done)).toEqual([]);
        expect(await store.getInteraction(`${done}:x`)).toBeUndefined();
        expect(await store.getRun(live)).toBeDefined();
        expect(await store.readEvents(live)).toHaveLength(1);
        // Its options too (their own table since v9).
        const options = async (id: string) => (await store.driver.query<{ n: unknown }>('SELECT count(*) AS n FROM run_options WHERE run_id = ?', [id]))[0]!.n;
        expect(Number(await options(done))).toBe(0);
        expect(Number(await options(live))).toBe(1);
      });
    });
  });
}

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting for a condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A database made by the first release (schema v1) opens with this code: it is migrated on open and
 * works, its runs starting at claim 0. `makeV1` builds a v1 database with one run in it; `open` opens
 * it with the current code.
 */
/**
 * A v2 database with runs waiting in every way (in memory and released, for an approval and for the
 * next message) opens as v3 with the status and the named request v3 writes.
 */
export function describeUpgradeFromV2(name: string, makeV2: () => Promise<SqlDriver>, open: () => Promise<SqlStore>, cleanup: () => Promise<void>): void {
  describe(`Store migrations to v3: ${name}`, () => {
    afterAll(cleanup);
    it('brings waiting runs to v3: idle for a next-message ask, the pending request named while in memory', async () => {
      const v2 = await makeV2();
      expect(await migrate(v2, MIGRATIONS.slice(0, 2))).toBe(2);
      const now = Date.now();
      const later = now + 60_000;
      const run = (id: string, status: string, owner: string | null, pending: string | null) =>
        v2.execute(
          `INSERT INTO runs (id, status, user_id, session_id, channel, task, options, owner, lease_expires_at, pending_interaction_id, created_at, updated_at, finished_at, epoch)
           VALUES (?, ?, 'alice', 's', 'web', 'old task', '{}', ?, ?, ?, ?, ?, ?, 1)`,
          [id, status, owner, owner ? later : null, pending, now, now, status === 'completed' ? now : null],
        );
      const ask = (id: string, runId: string, request: Record<string, unknown>, status = 'pending', at = now) =>
        v2.execute(`INSERT INTO interactions (id, run_id, kind, status, request, created_at) VALUES (?, ?, ?, ?, ?, ?)`, [
          id,
          runId,
          String(request.kind),
          status,
          JSON.stringify({ id, runId, createdAt: new Date(at).toISOString(), ...request }),
          at,
        ]);
      const nextMessage = { kind: 'input', title: 'Your reply', metadata: { purpose: 'next-message' } };
      const approval = { kind: 'confirm', title: 'Allow Bash?' };
      await run('v2_idle_live', 'running', 'A', null);
      await ask('v2_idle_live:input:1', 'v2_idle_live', nextMessage);
      await run('v2_approval_live', 'running', 'A', null);
      await ask('v2_approval_live:old', 'v2_approval_live', approval, 'answered', now - 10);
      await ask('v2_approval_live:new', 'v2_approval_live', approval, 'pending', now);
      await run('v2_idle_released', 'suspended', null, 'v2_idle_released:input:2');
      await ask('v2_idle_released:input:2', 'v2_idle_released', nextMessage);
      await run('v2_approval_released', 'suspended', null, 'v2_approval_released:ask');
      await ask('v2_approval_released:ask', 'v2_approval_released', approval);
      await run('v2_answered_released', 'suspended', null, 'v2_answered_released:input:1');
      await ask('v2_answered_released:input:1', 'v2_answered_released', nextMessage, 'answered');
      await run('v2_working', 'running', 'A', null);
      await run('v2_done', 'completed', null, null);
      await v2.close();

      const store = await open();
      try {
        expect(await store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
        const get = async (id: string) => {
          const r = await store.getRun(id);
          return { status: r?.status, owner: r?.owner, pendingInteractionId: r?.pendingInteractionId };
        };
        expect(await get('v2_idle_live')).toEqual({ status: 'idle', owner: 'A', pendingInteractionId: 'v2_idle_live:input:1' });
        expect(await get('v2_approval_live')).toEqual({ status: 'running', owner: 'A', pendingInteractionId: 'v2_approval_live:new' });
        expect(await get('v2_idle_released')).toEqual({ status: 'idle', owner: null, pendingInteractionId: 'v2_idle_released:input:2' });
        expect(await get('v2_approval_released')).toEqual({ status: 'suspended', owner: null, pendingInteractionId: 'v2_approval_released:ask' });
        // Its answer landed while nobody drove it: it is resumed as a suspended run with an answer was, not shown idle.
        expect(await get('v2_answered_released')).toEqual({ status: 'suspended', owner: null, pendingInteractionId: 'v2_answered_released:input:1' });
        expect(await get('v2_working')).toEqual({ status: 'running', owner: 'A', pendingInteractionId: null });
        expect(await get('v2_done')).toEqual({ status: 'completed', owner: null, pendingInteractionId: null });
        // The upgraded runs work: an answer to the live idle run's ask makes it running again.
        await store.claimAnswer('v2_idle_live:input:1', { requestId: 'v2_idle_live:input:1', kind: 'input', text: 'more', respondedAt: new Date().toISOString() });
        expect(await get('v2_idle_live')).toEqual({ status: 'running', owner: 'A', pendingInteractionId: null });
      } finally {
        await store.close();
      }
    });
  });
}

export function describeUpgradeFromV1(name: string, makeV1: () => Promise<SqlDriver>, open: () => Promise<SqlStore>, cleanup: () => Promise<void>): void {
  describe(`Store migrations: ${name}`, () => {
    afterAll(cleanup);
    it('upgrades a v1 database on open (runs.epoch added) and the upgraded store works', async () => {
      const v1 = await makeV1();
      expect(await migrate(v1, MIGRATIONS.slice(0, 1))).toBe(1);
      const now = Date.now();
      await v1.execute(
        `INSERT INTO runs (id, status, user_id, session_id, channel, task, options, owner, lease_expires_at, created_at, updated_at)
         VALUES ('run_v1', 'suspended', 'alice', 's', 'cli', 'old task', '{"model":"scripted:old","system":"be brief"}', NULL, NULL, ?, ?)`,
        [now, now],
      );
      await v1.close();
      const store = await open();
      try {
        expect(await store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
        // v9 moved the options out of the row: the run is read, listed and claimed with them.
        const options = { model: 'scripted:old', system: 'be brief' };
        expect(await store.getRun('run_v1')).toMatchObject({ status: 'suspended', task: 'old task', epoch: 0, options });
        expect(await store.listRuns({ userId: 'alice' })).toEqual([expect.objectContaining({ id: 'run_v1', options })]);
        const claimed = await store.claimRun('run_v1', 'A', 60_000, ['suspended']);
        expect(claimed).toMatchObject({ owner: 'A', epoch: 1, options });
        await store.write({ runId: 'run_v1', owner: 'A', epoch: 1, events: [event('run_v1', 1)], run: { status: 'completed', release: true } });
        await expect(store.write({ runId: 'run_v1', owner: 'A', epoch: 0, events: [event('run_v1', 2)] })).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.getRun('run_v1')).toMatchObject({ status: 'completed', owner: null });
        expect((await store.readEvents('run_v1')).map((e) => e.seq)).toEqual([1]);
      } finally {
        await store.close();
      }
      // Reopening finds nothing left to do.
      const again = await open();
      expect(await again.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      await again.close();
    });
  });
}
