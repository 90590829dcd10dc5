import type { AuditEntry, Store } from '../store/index.js';

/**
 * Where a run's permission gate sends its audit rows while a runner of this process drives the
 * run: to the run's recorder, which commits them with the run's next write — the call's intent,
 * its request, the step — instead of a commit of their own before the decision returns (one fsync
 * fewer per decision, and a decision lands in the same transaction as what it led to). A route
 * answers false when it cannot take the row (the run is not driven here, or its incarnation writes
 * nothing more); the caller then appends it on its own, as for any run driven elsewhere.
 */
export type AuditRoute = (runId: string, entry: AuditEntry) => boolean;

const routes = new WeakMap<Store, Set<AuditRoute>>();

/** Routes `store`'s audit rows of the runs `route` drives; returns the undo. */
export function routeRunAudit(store: Store, route: AuditRoute): () => void {
  let set = routes.get(store);
  if (!set) routes.set(store, (set = new Set()));
  set.add(route);
  return () => {
    set.delete(route);
  };
}

/** Hands `entry` to the recorder of its run when one in this process drives it through `store`. */
export function stageRunAudit(store: Store, entry: AuditEntry): boolean {
  const set = entry.runId === null ? undefined : routes.get(store);
  if (!set) return false;
  for (const route of set) if (route(entry.runId!, entry)) return true;
  return false;
}
