import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { UserPermissionStore } from '../permission/index.js';
import { lazyStoreUserPermissions } from '../runtime/user-permission-adapter.js';
import { DEFAULT_SQLITE_PATH, openStore } from '../store/open-store.js';

/**
 * The per-user permission store of `sage permissions --user`: the durable store (`--db` is not a
 * flag of that command, so `SAGE_DATABASE_URL`, else `.sage/sage.db` under the working directory).
 * The store is opened only when a `--user` rule is read or written, and closed after; reading
 * (`sage permissions check`) never creates the SQLite file.
 */
export async function openUserPermissionStore(): Promise<UserPermissionStore | undefined> {
  return lazyStoreUserPermissions(
    async (purpose) => {
      if (purpose === 'read' && !process.env.SAGE_DATABASE_URL && !existsSync(resolve(DEFAULT_SQLITE_PATH))) return undefined;
      const store = await openStore();
      return { store, release: () => store.close() };
    },
    { createdBy: 'sage permissions' },
  );
}
