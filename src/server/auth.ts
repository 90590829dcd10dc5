import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { formatZodError } from '../errors/index.js';
import { ServerConfigError, UnauthorizedError } from './errors.js';

export type Role = 'user' | 'admin';

/** Who is calling. Every route decides what they may see from this alone. */
export interface Principal {
  userId: string;
  role: Role;
}

/** The user every request acts as when auth is off (loopback only). */
export const LOCAL_PRINCIPAL: Principal = { userId: 'local', role: 'admin' };

const userIdSchema = z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'a user id is 1-64 letters, digits, ".", "_", "@" or "-"');

const tokensFileSchema = z.object({
  tokens: z.array(z.object({ token: z.string().min(8, 'a token has at least 8 characters'), userId: userIdSchema, role: z.enum(['user', 'admin']).default('user') })).min(1),
});

export interface TokenEntry {
  token: string;
  userId: string;
  role: Role;
}

/**
 * Parses `SAGE_TOKENS="tokenA=alice,tokenB=bob,tokenC=carol:admin"`. A malformed entry is a
 * startup error, never silently skipped: a typo must not leave someone locked out or let them in.
 */
export function parseTokenList(text: string): TokenEntry[] {
  const entries: TokenEntry[] = [];
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) throw new ServerConfigError(`SAGE_TOKENS entry "${redact(part)}" is not "token=user" or "token=user:admin".`);
    const token = part.slice(0, eq);
    const [userId = '', role = 'user', ...rest] = part.slice(eq + 1).split(':');
    const user = userIdSchema.safeParse(userId);
    if (!user.success || rest.length > 0 || (role !== 'user' && role !== 'admin')) {
      throw new ServerConfigError(`SAGE_TOKENS entry for "${userId}" is malformed: expected "token=user" or "token=user:admin".`);
    }
    entries.push({ token, userId: user.data, role });
  }
  return entries;
}

/** Reads a tokens file: `{ "tokens": [{ "token": "…", "userId": "alice", "role": "admin" }] }`. */
export function readTokensFile(path: string): TokenEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ServerConfigError(`Cannot read the tokens file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = tokensFileSchema.safeParse(json);
  if (!parsed.success) throw new ServerConfigError(`The tokens file ${path} is invalid: ${formatZodError(parsed.error)}`);
  return parsed.data.tokens;
}

function redact(text: string): string {
  return text.length <= 4 ? '…' : `${text.slice(0, 2)}…`;
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Maps bearer tokens to principals. Tokens are kept only as SHA-256 digests and compared in
 * constant time, so neither a heap dump nor response timing reveals them.
 */
export class TokenAuthenticator {
  private readonly entries: { digest: Buffer; principal: Principal }[];

  constructor(tokens: readonly TokenEntry[]) {
    const seen = new Set<string>();
    this.entries = tokens.map((t) => {
      const key = digest(t.token).toString('hex');
      if (seen.has(key)) throw new ServerConfigError(`The same token is configured twice (for ${t.userId}).`);
      seen.add(key);
      return { digest: digest(t.token), principal: { userId: t.userId, role: t.role } };
    });
  }

  get size(): number {
    return this.entries.length;
  }

  /** The principal for an `Authorization` header value; throws UnauthorizedError otherwise. */
  authenticate(header: string | undefined): Principal {
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw new UnauthorizedError();
    const candidate = digest(match[1]!);
    let found: Principal | undefined;
    // Compare against every entry so the time taken does not depend on which one matched.
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, candidate)) found = entry.principal;
    }
    if (!found) throw new UnauthorizedError('The bearer token is not valid.');
    return found;
  }
}

/** Loopback addresses, where running without auth is allowed (only this machine can connect). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}
