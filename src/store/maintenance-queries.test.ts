import { afterEach, describe, expect, it } from 'vitest';
import type { InteractionRequest, InteractionResponse } from '../interaction/index.js';
import type { SqlStore } from './sql-store.js';
import { postgresBackend, sqliteBackend, type ContractBackend } from './test-support/contract-backends.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from './open-store.js';
import { ORPHAN_CANDIDATES_SQL, WAKEABLE_RUNS_SQL } from './queries/maintenance.js';

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

describe('the wake lookup on SQLite', () => {
  it('filters released runs from the index runs_status_lease, not from every idle row (whose options come first)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-wake-plan-'));
    try {
      const file = join(dir, 'sage.db');
      await (await openSqliteStore(file)).close();
      const db = new Database(file);
      try {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${WAKEABLE_RUNS_SQL}`).all(10) as Array<{ detail: string }>).map((r) => r.detail);
        expect(plan[0]).toMatch(/^SEARCH r USING INDEX runs_status_lease \(status=\? AND lease_expires_at=\? AND owner=\?\)/);
        // The orphan lookup's two ranges search the same index (v10 folded runs_released into it).
        const orphans = (db.prepare(`EXPLAIN QUERY PLAN ${ORPHAN_CANDIDATES_SQL}`).all(0, 10) as Array<{ detail: string }>).map((r) => r.detail);
        expect(orphans.filter((d) => /^SEARCH runs/.test(d))).toEqual([
          'SEARCH runs USING INDEX runs_status_lease (status=? AND lease_expires_at<?)',
          'SEARCH runs USING INDEX runs_status_lease (status=? AND lease_expires_at=? AND owner=?)',
        ]);
        expect(orphans.filter((d) => /^SCAN/.test(d))).toEqual([]);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
