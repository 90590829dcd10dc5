import { z } from 'zod';
import { formatZodError } from '../errors/index.js';
import type { Store } from '../store/index.js';
import { ServerConfigError, TooManyRequestsError } from './errors.js';

/** How much one user may hold at once; every limit is per user (admins included). */
export interface UserLimits {
  /** Runs not finished (running or suspended, a conversation waiting for its next message included). */
  runsPerUser: number;
  /** Interactions waiting for an answer across the user's runs. */
  pendingInteractionsPerUser: number;
  /** Event streams (SSE) open at once, on this instance. */
  streamsPerUser: number;
}

export const DEFAULT_USER_LIMITS: UserLimits = { runsPerUser: 50, pendingInteractionsPerUser: 100, streamsPerUser: 16 };

const limit = z.number().int('a limit is a whole number').min(1, 'a limit is at least 1').max(1_000_000);
export const userLimitsSchema = z.object({ runsPerUser: limit, pendingInteractionsPerUser: limit, streamsPerUser: limit }).partial().strict();

/** The limits in force: the defaults with the operator's values over them; a bad value stops the server. */
export function resolveUserLimits(overrides: Partial<UserLimits> = {}): UserLimits {
  const parsed = userLimitsSchema.safeParse(Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)));
  if (!parsed.success) throw new ServerConfigError(`Invalid per-user limits: ${formatZodError(parsed.error)}`);
  return { ...DEFAULT_USER_LIMITS, ...parsed.data };
}

/**
 * Refuses a new run when the user already has `runsPerUser` runs in flight or
 * `pendingInteractionsPerUser` requests waiting (each waiting run holds memory and store rows,
 * so one user's runs could otherwise fill the server). Counted in the store, so it holds across instances
 * up to the requests racing this check.
 */
export async function assertRunCapacity(store: Store, userId: string, limits: UserLimits): Promise<void> {
  // Counted, not listed: a user near the limit would otherwise cost every new run a read (and
  // parse) of all their runs' options, and with a high limit each start grew with the runs in flight.
  const inFlight = await store.countRuns({ userId, status: ['running', 'idle', 'suspended'], limit: limits.runsPerUser });
  if (inFlight >= limits.runsPerUser) {
    throw new TooManyRequestsError('too_many_runs', `You have ${limits.runsPerUser} runs in flight, the most this server allows per user; cancel one or let one finish first.`, limits.runsPerUser);
  }
  const pending = await store.countInteractions({ userId, status: ['pending'], limit: limits.pendingInteractionsPerUser });
  if (pending >= limits.pendingInteractionsPerUser) {
    throw new TooManyRequestsError(
      'too_many_pending_interactions',
      `You have ${limits.pendingInteractionsPerUser} requests waiting for an answer, the most this server allows per user; answer or cancel some first.`,
      limits.pendingInteractionsPerUser,
    );
  }
}

/** One open event stream's place in its user's count; released exactly once. */
export interface StreamSlot {
  /** Whether an event stream took it over (and will release it when the stream ends). */
  claimed: boolean;
  release(): void;
}

/** Open event streams per user on this instance. */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  count(userId: string): number {
    return this.open.get(userId) ?? 0;
  }

  /** A slot for `userId`, or 429 when they already hold the most streams allowed. */
  acquire(userId: string): StreamSlot {
    const n = this.count(userId);
    if (n >= this.max) {
      throw new TooManyRequestsError('too_many_streams', `You have ${this.max} event streams open, the most this server allows per user; close a tab or a stream first.`, this.max);
    }
    this.open.set(userId, n + 1);
    let released = false;
    return {
      claimed: false,
      release: () => {
        if (released) return;
        released = true;
        const left = this.count(userId) - 1;
        if (left <= 0) this.open.delete(userId);
        else this.open.set(userId, left);
      },
    };
  }
}
