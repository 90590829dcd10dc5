import type { UserPermissionStore } from '../permission/index.js';

/**
 * The per-user permission store of `sage permissions --user`: the durable store (`--db` is not a
 * flag of that command, so `SAGE_DATABASE_URL`, else `.sage/sage.db` under the working directory).
 * The store is opened only when a `--user` rule is actually read or written, and closed after.
 */
export async function openUserPermissionStore(): Promise<UserPermissionStore | undefined> {
  const { lazyStoreUserPermissions } = await import('../durable/user-permission-adapter.js');
  return lazyStoreUserPermissions(async () => {
    const { openStore } = await import('../store/open-store.js');
    const store = await openStore();
    return { store, release: () => store.close() };
  }, { createdBy: 'sage permissions' });
}
