import { StoreDownError, type Store, type StoreHealthReport } from '../../store/index.js';

/** The store methods that write, and the readiness ping: what fails while the store is "down". */
const FAILING = new Set<string | symbol>(['write', 'claimAnswer', 'saveInteraction', 'createRun', 'claimRun', 'appendOrphanEvents', 'closeInteraction', 'ping', 'schemaVersion']);

export interface SwitchableStore {
  store: Store;
  /** While true, every write (and the readiness ping) throws StoreDownError, as a store that went away does. */
  down: boolean;
  /** How many calls were refused while down, by method. */
  refused: Map<string, number>;
}

/**
 * A real store whose writes can be made to fail with the typed StoreDownError the drivers raise
 * for a lost connection, so a test decides exactly when the store is away and when it is back.
 * Reads keep working (as on a full disk), which keeps the page's stream and lists up meanwhile.
 */
export function switchableStore(inner: Store): SwitchableStore {
  const control: SwitchableStore = { store: undefined as unknown as Store, down: false, refused: new Map() };
  control.store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'health') {
        return (): StoreHealthReport =>
          control.down ? { status: 'unavailable', code: 'store_unavailable', message: 'switched off by the test', since: new Date().toISOString() } : (target.health?.() ?? { status: 'ok' });
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (!FAILING.has(prop)) return (value as (...args: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => {
        if (control.down) {
          control.refused.set(String(prop), (control.refused.get(String(prop)) ?? 0) + 1);
          return Promise.reject(new StoreDownError(target.location, 'switched off by the test'));
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return control;
}
