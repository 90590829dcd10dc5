import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import type { Store } from '../store/index.js';
import { createApp } from './app.js';
import { isLoopbackHost, parseTokenList, readTokensFile, TokenAuthenticator, type TokenEntry } from './auth.js';
import { ServerConfigError } from './errors.js';
import type { RunDriver } from './run-driver.js';
import { DEFAULT_WEB_ROOT } from './static-files.js';
import { resolveUserLimits, type UserLimits } from '../runtime/user-limits.js';

export interface ServerOptions {
  store: Store;
  driver: RunDriver;
  /** The address the server will listen on; decides whether running without tokens is allowed. */
  host?: string;
  /** Tokens, or the `SAGE_TOKENS` text; default `env.SAGE_TOKENS`. */
  tokens?: readonly TokenEntry[] | string;
  /** A JSON tokens file (`{ "tokens": [{ "token", "userId", "role" }] }`); default `env.SAGE_TOKENS_FILE`. */
  tokensFile?: string;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Largest request body, bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** The built web UI; `false` serves none. Default `web/dist` of this package, when it exists. */
  webRoot?: string | false;
  /** How long a graceful shutdown waits for in-flight requests, ms. Default 10 s. */
  shutdownGraceMs?: number;
  /** Per-user limits (runs in flight, pending interactions, event streams); defaults in DEFAULT_USER_LIMITS. */
  limits?: Partial<UserLimits>;
}

/** A server not yet listening: its fetch handler and the shutdown that drains it. */
export interface SageServer {
  readonly fetch: (request: Request) => Response | Promise<Response>;
  /** Whether bearer tokens are required. */
  readonly auth: boolean;
  readonly logger: Logger;
  /** Stops new work, ends the event streams, waits for in-flight requests, then stops the driver. */
  shutdown(): Promise<void>;
  /** For the listener: counts requests so shutdown can wait for them. */
  trackRequest<T>(work: () => Promise<T>): Promise<T>;
  /** For the listener: the port it bound, which requests must name in Host when auth is off. */
  setListeningPort(port: number): void;
}

const DEFAULT_MAX_BODY = 1024 * 1024;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function loadTokens(options: ServerOptions): TokenEntry[] {
  const env = options.env ?? process.env;
  const file = options.tokensFile ?? env['SAGE_TOKENS_FILE'];
  const list = options.tokens ?? env['SAGE_TOKENS'];
  const entries: TokenEntry[] = [];
  if (file) entries.push(...readTokensFile(file));
  if (typeof list === 'string') entries.push(...parseTokenList(list));
  else if (list) entries.push(...list);
  return entries;
}

/**
 * Builds the API and web UI over a store and a run driver, without listening. Refuses to run
 * without tokens unless `host` is a loopback address, where only this machine can connect.
 *
 * @example
 * const server = createServer({ store, driver, tokens: 'secret-token=alice:admin' });
 * const res = await server.fetch(new Request('http://x/runs', { headers: { authorization: 'Bearer secret-token' } }));
 */
export function createServer(options: ServerOptions): SageServer {
  const logger = options.logger ?? pino({ name: 'sage-server' });
  const host = options.host ?? '127.0.0.1';
  const tokens = loadTokens(options);
  const authenticator = tokens.length > 0 ? new TokenAuthenticator(tokens) : undefined;
  if (!authenticator && !isLoopbackHost(host)) {
    throw new ServerConfigError(`Refusing to serve ${host} without authentication: set SAGE_TOKENS (e.g. "token=alice,token2=bob:admin") or a tokens file, or bind to 127.0.0.1.`);
  }
  const webRoot = options.webRoot === false ? undefined : (options.webRoot ?? (existsSync(DEFAULT_WEB_ROOT) ? DEFAULT_WEB_ROOT : undefined));
  const limits = resolveUserLimits(options.limits);
  let listeningPort: number | undefined;
  let shuttingDown = false;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const streams = new Set<() => void>();
  const app = createApp({
    store: options.store,
    driver: options.driver,
    logger,
    auth: authenticator !== undefined,
    authenticator,
    startedAt: Date.now(),
    isShuttingDown: () => shuttingDown,
    trackStream: (abort) => {
      streams.add(abort);
      return () => streams.delete(abort);
    },
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY,
    webRoot,
    version: packageVersion(),
    limits,
    listeningPort: () => listeningPort,
  });

  return {
    fetch: (request) => app.fetch(request),
    auth: authenticator !== undefined,
    logger,
    setListeningPort(port) {
      listeningPort = port;
    },
    async trackRequest(work) {
      inFlight++;
      try {
        return await work();
      } finally {
        if (--inFlight === 0) drained?.();
      }
    },
    async shutdown() {
      if (shuttingDown) return;
      shuttingDown = true;
      // Streams end cleanly; clients reconnect (elsewhere) with Last-Event-ID and miss nothing.
      for (const abort of [...streams]) abort();
      if (inFlight > 0) {
        const grace = options.shutdownGraceMs ?? 10_000;
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, grace).unref();
        });
      }
      await options.driver.close();
    },
  };
}

export interface StartServerOptions extends Omit<ServerOptions, 'store' | 'driver'> {
  port?: number;
  host?: string;
  store: Store;
  driver: RunDriver;
  /** Close the store after the driver on shutdown (when the caller opened it for the server). */
  closeStore?: boolean;
  /**
   * Routes served as they are, outside the API's auth (chat channels' inbound webhooks: each checks
   * its platform's own signature), matched by method and exact path.
   */
  extraRoutes?: readonly { method: 'GET' | 'POST'; path: string; handle(request: Request): Promise<Response> }[];
  /** Stopped first on shutdown (the chat channels), so nothing new arrives while the driver drains. */
  beforeShutdown?: () => Promise<void>;
}

export interface RunningServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly server: SageServer;
  /** Graceful shutdown: stop accepting, end streams, finish in-flight writes, leave runs resumable. */
  close(): Promise<void>;
}

/** Listens on `host:port` (default 127.0.0.1:7878; port 0 picks a free one). */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const sage = createServer({ ...options, host });
  const listener: ServerType = await new Promise((resolve, reject) => {
    const extra = options.extraRoutes ?? [];
    const route = (req: Request) => {
      if (extra.length === 0) return undefined;
      const path = new URL(req.url).pathname;
      return extra.find((r) => r.method === req.method && r.path === path);
    };
    const s = serve(
      {
        fetch: (req: Request) =>
          sage.trackRequest(async () => {
            const own = route(req);
            return own ? own.handle(req) : sage.fetch(req);
          }),
        port: options.port ?? 7878,
        hostname: host,
      },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  const address = listener.address() as AddressInfo;
  sage.setListeningPort(address.port);
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${urlHost}:${address.port}`;
  sage.logger.info({ url, auth: sage.auth, store: options.store.location }, 'sage server listening');
  if (!sage.auth) sage.logger.warn(`authentication is OFF: no tokens configured, so only loopback clients (${host}) can connect and every request acts as user "local" (admin)`);
  let closing: Promise<void> | undefined;
  return {
    url,
    host: address.address,
    port: address.port,
    server: sage,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
        const http = listener as unknown as { closeIdleConnections?: () => void; closeAllConnections?: () => void };
        http.closeIdleConnections?.();
        await options.beforeShutdown?.().catch((error: unknown) => sage.logger.error({ err: error }, 'stopping the chat channels failed'));
        await sage.shutdown();
        http.closeAllConnections?.();
        await stopped;
        if (options.closeStore) await options.store.close();
        sage.logger.info('sage server stopped');
      })();
      return closing;
    },
  };
}
