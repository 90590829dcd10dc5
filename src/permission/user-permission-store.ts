/**
 * Allow and deny patterns per user id, in the rule syntax. The engine checks a user's
 * denies with the deny rules and their allows after the allow rules. Backends (SQLite, Postgres)
 * implement this interface in src/store/.
 */
export interface UserPermissionStore {
  readonly specificationVersion: 'v1';
  list(userId: string): Promise<{ allow: string[]; deny: string[] }>;
  add(userId: string, behavior: 'allow' | 'deny', rule: string): Promise<void>;
  /** Removes the rule from both lists; resolves false when it was in neither. */
  remove(userId: string, rule: string): Promise<boolean>;
}

/** In-memory store, for tests and single-process use. */
export class InMemoryUserPermissionStore implements UserPermissionStore {
  readonly specificationVersion = 'v1' as const;
  private readonly users = new Map<string, { allow: string[]; deny: string[] }>();

  async list(userId: string): Promise<{ allow: string[]; deny: string[] }> {
    const entry = this.users.get(userId);
    return { allow: [...(entry?.allow ?? [])], deny: [...(entry?.deny ?? [])] };
  }

  async add(userId: string, behavior: 'allow' | 'deny', rule: string): Promise<void> {
    const entry = this.users.get(userId) ?? { allow: [], deny: [] };
    // Saving a rule in one list takes it out of the other, so a pattern never both allows and denies.
    const other = behavior === 'allow' ? 'deny' : 'allow';
    entry[other] = entry[other].filter((r) => r !== rule);
    if (!entry[behavior].includes(rule)) entry[behavior].push(rule);
    this.users.set(userId, entry);
  }

  async remove(userId: string, rule: string): Promise<boolean> {
    const entry = this.users.get(userId);
    if (!entry) return false;
    const before = entry.allow.length + entry.deny.length;
    entry.allow = entry.allow.filter((r) => r !== rule);
    entry.deny = entry.deny.filter((r) => r !== rule);
    return entry.allow.length + entry.deny.length < before;
  }
}
