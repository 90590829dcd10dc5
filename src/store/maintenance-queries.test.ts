import { afterEach, describe, expect, it } from 'vitest';
import type { InteractionRequest, InteractionResponse } from '../interaction/index.js';
import type { SqlStore } from './sql-store.js';
import { postgresBackend, sqliteBackend, type ContractBackend } from './test-support/contract-backends.js';

// The maintenance pass's two lookups (queries/maintenance.ts) find exactly what the claim and the
// old list-then-filter found, on both backends.

const confirm = (runId: string, id: string): InteractionRequest => ({ id, runId, kind: 'confirm', title: 'Allow?', createdAt: new Date().toISOString() }) as InteractionRequest;
const yes = (id: string): InteractionResponse => ({ requestId: id, kind: 'confirm', confirmed: true, userId: 'bob', respondedAt: new Date().toISOString() });
const newRun = (id: string) => ({ id, userId: 'u', sessionId: id, channel: 'sdk', task: 't', options: {} });

function describeMaintenanceQueries(backend: ContractBackend): void {
  describe(`maintenance lookups (${backend.name})`, () => {
    let store: SqlStore | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
      await backend.cleanup();
    });

    /** A run that asked `request` and was released: suspended, no owner, naming the request. */
    async function released(s: SqlStore, id: string, status: 'suspended' | 'idle' = 'suspended'): Promise<string> {
      const run = await s.createRun(newRun(id), { id: 'A', leaseMs: 60_000 });
      const iid = `${id}:c1:permission`;
      await s.saveInteraction(confirm(id, iid), { owner: 'A', epoch: run.epoch, events: [] });
      await s.write({ runId: id, owner: 'A', epoch: run.epoch, run: { status, release: true } });
      return iid;
    }

    it('lists released runs whose request was answered, none still waiting or owned', async () => {
      const s = (store = await backend.openFresh());
      await released(s, 'r_waiting');
      const answered = await released(s, 'r_answered');
      await s.claimAnswer(answered, yes(answered));
      const idleAnswered = await released(s, 'r_idle', 'idle');
      await s.claimAnswer(idleAnswered, yes(idleAnswered));
      // Held in memory by its owner: not the sweep's, whatever its request says.
      await s.createRun(newRun('r_owned'), { id: 'A', leaseMs: 60_000 });
      const ids = (await s.listWakeableRuns(10)).map((r) => r.id).sort();
      expect(ids).toEqual(['r_answered', 'r_idle']);
      expect(await s.listWakeableRuns(1)).toHaveLength(1);
    });

    it('lists the runs claimOrphans would claim, and nothing when every lease holds', async () => {
      const s = (store = await backend.openFresh());
      await s.createRun(newRun('r_live'), { id: 'A', leaseMs: 60_000 });
      expect(await s.listOrphanCandidates(Date.now(), 10)).toEqual([]);
      await s.createRun(newRun('r_queued'), null);
      await s.createRun(newRun('r_dead'), { id: 'B', leaseMs: -1_000 });
      await released(s, 'r_released');
      const candidates = (await s.listOrphanCandidates(Date.now(), 10)).sort();
      expect(candidates).toEqual(['r_dead', 'r_queued']);
      const claimed = (await s.claimOrphans('C', 60_000, 10)).map((r) => r.id).sort();
      expect(claimed).toEqual(candidates);
      expect(await s.listOrphanCandidates(Date.now(), 10)).toEqual([]);
    });
  });
}

describeMaintenanceQueries(sqliteBackend('sage-maintenance-'));
describeMaintenanceQueries(postgresBackend('maint'));
