import type { RunOwnerRecord, RunRecord, Store } from '../store/index.js';
import { ownerLiveness, thisProcess } from './owner-process.js';
import type { RunnerState } from './runner-state.js';

// Dead owners on this host: a lease whose process is gone is ended at once, so its runs are taken
// over in a moment instead of when the lease runs out. Owners on other hosts keep their leases.

/** Records this runner's process as the owner its leases name (once; again after a failure). */
export function registerOwner(state: RunnerState): Promise<void> {
  state.ownerRegistration ??= state.store.registerOwner({ owner: state.instanceId, ...thisProcess() }).catch((error: unknown) => {
    state.ownerRegistration = undefined;
    throw error;
  });
  return state.ownerRegistration;
}

/** Ends the leases of every owner on this host whose process died; returns the runs freed. */
export async function reapDeadOwners(state: RunnerState): Promise<string[]> {
  const here = thisProcess();
  const freed: string[] = [];
  for (const owner of await state.store.listOwnersOnHost(here.host)) {
    if (owner.owner === state.instanceId || ownerLiveness(owner, here) !== 'dead') continue;
    freed.push(...(await state.store.expireOwner(owner.owner)));
  }
  return freed;
}

/** Whether `owner` is a process of this host that died; if so its leases are ended now. */
export async function endLeaseIfDead(state: RunnerState, owner: string): Promise<boolean> {
  if (owner === state.instanceId) return false;
  const [record] = await state.store.getOwners([owner]);
  if (!record || ownerLiveness(record) !== 'dead') return false;
  await state.store.expireOwner(owner);
  return true;
}

/**
 * The dead owners among these runs' (running or idle under a lease, owned by a process of this
 * host that is gone), by owner id: what `sage runs list` shows as orphaned rather than running.
 */
export async function deadOwners(store: Store, runs: readonly RunRecord[]): Promise<Map<string, RunOwnerRecord>> {
  const held = runs.filter((r) => (r.status === 'running' || r.status === 'idle') && r.owner !== null && r.leaseExpiresAt !== null);
  const dead = new Map<string, RunOwnerRecord>();
  if (held.length === 0) return dead;
  const here = thisProcess();
  for (const owner of await store.getOwners(held.map((r) => r.owner!))) {
    if (ownerLiveness(owner, here) === 'dead') dead.set(owner.owner, owner);
  }
  return dead;
}
