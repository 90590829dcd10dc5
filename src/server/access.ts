import type { Principal } from './auth.js';
import { ForbiddenError } from './errors.js';

/** A user reaches only their own things; an admin reaches everyone's. */
export function canAccess(principal: Principal, ownerId: string): boolean {
  return principal.role === 'admin' || principal.userId === ownerId;
}

export function assertAccess(principal: Principal, ownerId: string, what: string): void {
  if (!canAccess(principal, ownerId)) throw new ForbiddenError(`${what} belongs to another user.`);
}

/** The user a listing is scoped to: a user sees only their own; an admin may filter by anyone or see all. */
export function scopeUser(principal: Principal, requested: string | undefined): string | undefined {
  if (principal.role === 'admin') return requested;
  if (requested !== undefined && requested !== principal.userId) throw new ForbiddenError(`Only an admin may list another user's records.`);
  return principal.userId;
}
