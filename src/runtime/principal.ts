import { z } from 'zod';

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

/**
 * A server user's id (bearer tokens, a chat channel's `users` map). It never contains ":": a chat
 * sender's principal always does (`telegram:42`, `webhook:ci:alice`), so no server user can be
 * named like a chat sender and be taken for them.
 */
export const serverUserIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._@-]{1,64}$/, 'a user id is 1-64 letters, digits, ".", "_", "@" or "-" (no ":", which only chat senders\' ids such as "telegram:42" contain)');
