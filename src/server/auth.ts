import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { formatZodError } from '../errors/index.js';
import { serverUserIdSchema, type Principal, type Role } from '../runtime/principal.js';
import { ServerConfigError, UnauthorizedError } from './errors.js';

// Role and Principal are decided on while building a run's gate, so they live in src/runtime.
export type { Principal, Role } from '../runtime/principal.js';

/** The user every request acts as when auth is off (loopback only). */
export const LOCAL_PRINCIPAL: Principal = { userId: 'local', role: 'admin' };

const userIdSchema = serverUserIdSchema;

/** The shortest bearer token accepted, from SAGE_TOKENS or a tokens file alike. */
export const MIN_TOKEN_LENGTH = 8;

const tokensFileSchema = z.object({
  tokens: z.array(z.object({ token: z.string().min(MIN_TOKEN_LENGTH, `a token has at least ${MIN_TOKEN_LENGTH} characters`), userId: userIdSchema, role: z.enum(['user', 'admin']).default('user') })).min(1),
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
    if (rest.length > 0 || (role !== 'user' && role !== 'admin')) {
      throw new ServerConfigError(
        `SAGE_TOKENS entry for "${userId}" is malformed: expected "token=user" or "token=user:admin" (what follows ":" is the role; a user id has no ":", which only chat senders' ids such as "telegram:42" contain).`,
      );
    }
    const user = userIdSchema.safeParse(userId);
    if (!user.success) throw new ServerConfigError(`SAGE_TOKENS entry for "${userId}" is malformed: ${user.error.issues[0]!.message}.`);
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new ServerConfigError(`SAGE_TOKENS entry for "${user.data}" has a token of ${token.length} characters; a token has at least ${MIN_TOKEN_LENGTH} (use a random one, e.g. \`openssl rand -hex 24\`).`);
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
      if (t.token.length < MIN_TOKEN_LENGTH) throw new ServerConfigError(`The token for ${t.userId} has ${t.token.length} characters; a token has at least ${MIN_TOKEN_LENGTH}.`);
      // However the entries were built: a user named like a chat principal could act as that sender.
      const user = userIdSchema.safeParse(t.userId);
      if (!user.success) throw new ServerConfigError(`The token for "${t.userId}" names an invalid user: ${user.error.issues[0]!.message}.`);
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

/** Loopback names a request may use when auth is off: `localhost`, 127.0.0.0/8, `::1`. */
function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h === '[::1]' || /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h);
}

/** `host[:port]` → its parts; undefined when it is not one (userinfo, a path, an empty port). */
function splitHost(value: string): { hostname: string; port: number | undefined } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/@\s]+)(?::(\d{1,5}))?$/.exec(value);
  if (!m) return undefined;
  return { hostname: m[1]!, port: m[2] === undefined ? undefined : Number(m[2]) };
}

/**
 * Why a request may not act as the local admin when auth is off, or undefined when it may. The
 * socket being loopback is not enough: a page on attacker.example whose name is re-pointed at
 * 127.0.0.1 (DNS rebinding) reaches this server with `Host: attacker.example`, and any page can
 * send requests with its own `Origin`. So the Host must be a loopback name with this server's port,
 * and an Origin, when sent, must be such an address too.
 */
export function loopbackRequestProblem(host: string | undefined, origin: string | undefined, port: number | undefined): string | undefined {
  const parsed = host === undefined ? undefined : splitHost(host.trim());
  const portOk = (p: number | undefined, fallback: number) => port === undefined || (p ?? fallback) === port;
  if (!parsed || !isLoopbackName(parsed.hostname) || !portOk(parsed.port, 80)) {
    const p = port ? `:${port}` : '';
    return `This server has no authentication and answers only requests addressed to it by a loopback name (Host: 127.0.0.1${p}, localhost${p} or [::1]${p}); this one named another host.`;
  }
  if (origin === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const ok = url && (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === origin && isLoopbackName(url.hostname) && portOk(url.port === '' ? undefined : Number(url.port), url.protocol === 'https:' ? 443 : 80);
  if (!ok) return 'This server has no authentication and accepts requests only from its own pages (a loopback Origin); a page from another origin cannot act here.';
  return undefined;
}
