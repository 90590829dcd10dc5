/**
 * Who starts or answers a run. Defined here rather than in src/server/auth.ts because the run and
 * server policies decide on it while building a run's gate; the server's auth re-exports it.
 */
export type Role = 'user' | 'admin';

/** Who is calling. Every route decides what they may see from this alone. */
export interface Principal {
  userId: string;
  role: Role;
}
