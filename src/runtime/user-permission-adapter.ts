import type { UserPermissionStore } from '../permission/user-permission-store.js';
import type { Store } from '../store/index.js';

/** Who is recorded as having added a rule: a fixed name (`sage permissions`) or from the user (the server: the user themself). */
type CreatedBy = string | ((userId: string) => string);

/**
 * The permission engine's per-user store (`UserPermissionStore`) over the durable store's
 * `user_permissions` table. Saving a rule in one list takes it out of the other, as the in-memory
 * store does. Who added a rule is recorded when given (`createdBy`).
 */
export function storeUserPermissions(store: Store, options: { createdBy?: CreatedBy } = {}): UserPermissionStore {
  return lazyStoreUserPermissions(async () => ({ store, release: async () => {} }), options);
}

/**
 * The same, opening the store only when a rule is read or written, and releasing it after each
 * call (`sage permissions --user …` must not create a database it never uses, nor keep a
 * Postgres pool open).
 */
export function lazyStoreUserPermissions(
  open: (purpose: 'read' | 'write') => Promise<{ store: Store; release: () => Promise<void> } | undefined>,
  options: { createdBy?: CreatedBy } = {},
): UserPermissionStore {
  const use = async <T>(fn: (store: Store) => Promise<T>, purpose: 'read' | 'write' = 'write', none?: T): Promise<T> => {
    const opened = await open(purpose);
    // No database yet: nothing to read (a read never creates one).
    if (!opened) return none as T;
    const { store, release } = opened;
    try {
      return await fn(store);
    } finally {
      await release();
    }
  };
  return {
    specificationVersion: 'v1',
    list: (userId) =>
      use(async (store) => {
        const records = await store.listUserPermissions(userId);
        return {
          allow: records.filter((r) => r.behavior === 'allow').map((r) => r.rule),
          deny: records.filter((r) => r.behavior === 'deny').map((r) => r.rule),
        };
      }, 'read', { allow: [], deny: [] }),
    add: (userId, behavior, rule) =>
      use(async (store) => {
        await store.removeUserPermission(userId, rule, behavior === 'allow' ? 'deny' : 'allow');
        const createdBy = typeof options.createdBy === 'function' ? options.createdBy(userId) : options.createdBy;
        await store.addUserPermission({ userId, rule, behavior, createdBy: createdBy ?? null });
      }),
    remove: (userId, rule) => use(async (store) => (await store.removeUserPermission(userId, rule)) > 0, 'read', false),
  };
}
