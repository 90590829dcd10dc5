import type { UserPermissionStore } from '../permission/index.js';

/** The per-user permission store of `sage permissions --user`: the durable store when it is available. */
export async function openUserPermissionStore(): Promise<UserPermissionStore | undefined> {
  return undefined;
}
