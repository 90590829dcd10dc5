import pg from 'pg';
import { join, resolve } from 'node:path';
import { SageError } from '../errors/index.js';
import { StoreUnavailableError, StoreUrlError } from './errors.js';
import { migrate } from './migrations.js';
import { NotificationHub } from './notification-hub.js';
import { SqlStore, type NotificationTransport } from './sql-store.js';
import { PostgresDriver, type PostgresOptions } from './sql/postgres-driver.js';
import { SqliteDriver, type SqliteOptions } from './sql/sqlite-driver.js';
import type { SqlTx } from './sql/driver.js';
import type { Store, StoreNotification } from './types.js';

/** The embedded default: `.sage/sage.db` under the working directory. */
export const DEFAULT_SQLITE_PATH = join('.sage', 'sage.db');

/** Stores opened on one file in one process share their subscribers. */
const sqliteHubs = new Map<string, NotificationHub>();
function hubFor(location: string): NotificationHub {
  if (location === ':memory:') return new NotificationHub();
  let hub = sqliteHubs.get(location);
  if (!hub) {
    hub = new NotificationHub();
    sqliteHubs.set(location, hub);
  }
  return hub;
}

/**
 * The `synchronous` setting from `SAGE_SQLITE_SYNCHRONOUS` (`full` or `normal`, any case); undefined
 * when unset (the default, `full`). Anything else is refused rather than silently weakened.
 */
export function sqliteSynchronousFromEnv(env: NodeJS.ProcessEnv, location: string): SqliteOptions['synchronous'] {
  const raw = env.SAGE_SQLITE_SYNCHRONOUS?.trim().toLowerCase();
  if (!raw) return undefined;
  if (raw === 'full' || raw === 'normal') return raw;
  throw new StoreUnavailableError(location, `SAGE_SQLITE_SYNCHRONOUS must be "full" or "normal", not "${env.SAGE_SQLITE_SYNCHRONOUS}".`);
}

/**
 * Opens (and migrates) the SQLite store at `path`. Notifications are in-process: SQLite serves one
 * process at a time well, and a second process sharing the file sees the data, not the pushes.
 * `synchronous` comes from `options`, else `SAGE_SQLITE_SYNCHRONOUS`, else `full`.
 */
export async function openSqliteStore(path: string, options: SqliteOptions & { env?: NodeJS.ProcessEnv } = {}): Promise<SqlStore> {
  const location = path === ':memory:' ? path : resolve(path);
  const { env, ...sqlite } = options;
  const synchronous = sqlite.synchronous ?? sqliteSynchronousFromEnv(env ?? process.env, location);
  const driver = new SqliteDriver(location, { ...sqlite, ...(synchronous ? { synchronous } : {}) });
  const hub = hubFor(location);
  const transport: NotificationTransport = {
    inTx: async (tx, n) => tx.afterCommit(() => hub.deliver(n)),
    publish: async (n) => hub.deliver(n),
    listen: async () => {},
    close: async () => {},
  };
  try {
    await migrate(driver);
  } catch (error) {
    await driver.close();
    throw error;
  }
  return new SqlStore(driver, hub, transport);
}

/**
 * Checks that `url` is a Postgres URL before anything connects: `pg` reads a non-URL as a host name
 * ("notaurl" → "getaddrinfo ENOTFOUND base"), which names neither the setting nor the fix. `source`
 * is what the user set (the variable's name). The URL itself is never echoed: it may hold a password.
 */
export function assertPostgresUrl(url: string, source = 'The database URL'): void {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new StoreUrlError(source, 'is not a URL');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new StoreUrlError(source, `starts with "${parsed.protocol}//"`);
  // A Unix socket is named with ?host=/path instead of a host name.
  if (!parsed.hostname && !parsed.searchParams.get('host')) throw new StoreUrlError(source, 'names no host');
}

/**
 * Opens (and migrates) the Postgres store. Notifications go through LISTEN/NOTIFY on a channel
 * named after the schema, so any instance sharing the database hears every commit.
 */
export async function openPostgresStore(url: string, options: PostgresOptions & { urlSource?: string } = {}): Promise<SqlStore> {
  assertPostgresUrl(url, options.urlSource);
  const driver = new PostgresDriver(url, options);
  const hub = new NotificationHub();
  const channel = `sage_${driver.schema}`;
  let listener: pg.Client | undefined;
  let listening: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let retryMs = 100;
  let closed = false;
  /** The connection was lost since the last LISTEN: the next one that succeeds announces a resync. */
  let missed = false;

  /**
   * One LISTEN connection. When it drops (the server restarted, the backend was terminated, the
   * network blinked) it is opened again with backoff, and subscribers get a `resync`: whatever was
   * notified while it was down is lost, so they re-check what they wait for in the tables.
   */
  const connect = (): Promise<void> => {
    // Compared against `listening` by the callbacks below, which all run after the assignment.
    let attempt: Promise<void> | undefined = undefined;
    attempt = (async () => {
      const client = new pg.Client({ connectionString: url, application_name: `sage-listen ${channel}` });
      client.on('notification', (message) => {
        if (message.channel !== channel || !message.payload) return;
        try {
          hub.deliver(JSON.parse(message.payload) as StoreNotification);
        } catch {
          // Not ours (a foreign payload on the channel): ignore it.
        }
      });
      let gone = false;
      const lost = () => {
        // 'error' and 'end' both come for one loss; a lost connection must never crash the process.
        if (gone) return;
        gone = true;
        client.end().catch(() => {});
        if (listener === client) listener = undefined;
        if (listening === attempt) listening = undefined;
        missed = true;
        if (!closed) scheduleReconnect();
      };
      client.on('error', lost);
      client.on('end', lost);
      try {
        await client.connect();
        await client.query(`LISTEN ${channel}`);
      } catch (error) {
        gone = true;
        await client.end().catch(() => {});
        if (listening === attempt) listening = undefined;
        throw error;
      }
      if (closed) {
        gone = true;
        await client.end().catch(() => {});
        return;
      }
      listener = client;
      retryMs = 100;
      if (missed) {
        missed = false;
        hub.deliver({ type: 'resync', runId: '*' });
      }
    })();
    listening = attempt;
    return attempt;
  };
  const scheduleReconnect = () => {
    if (retry || closed) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (closed || listening) return;
      connect().catch(() => {
        retryMs = Math.min(retryMs * 2, 5_000);
        scheduleReconnect();
      });
    }, retryMs);
    retry.unref();
  };

  const transport: NotificationTransport = {
    inTx: async (tx: SqlTx, n: StoreNotification) => {
      // pg_notify inside the transaction is delivered on commit, and dropped on rollback.
      await tx.query('SELECT pg_notify(?, ?)', [channel, JSON.stringify(n)]);
    },
    publish: async (n) => {
      await driver.query('SELECT pg_notify(?, ?)', [channel, JSON.stringify(n)]);
    },
    listen: () => listening ?? connect(),
    close: async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      retry = undefined;
      await listening?.catch(() => {});
      await listener?.end().catch(() => {});
    },
  };
  try {
    await migrate(driver);
  } catch (error) {
    await driver.close();
    if (SageError.isInstance(error)) throw error;
    throw new StoreUnavailableError(driver.location, (error as Error).message, { cause: error });
  }
  return new SqlStore(driver, hub, transport);
}

export interface OpenStoreOptions {
  /** A SQLite file; default `.sage/sage.db` under `cwd`. Ignored when a database URL is given. */
  db?: string;
  /** A Postgres URL; default `SAGE_DATABASE_URL`. */
  url?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  sqlite?: SqliteOptions;
  postgres?: PostgresOptions;
}

/**
 * Opens the store the way the CLI and the server choose it: `--db PATH` first, then
 * `SAGE_DATABASE_URL` (Postgres), else the embedded SQLite file under the working directory.
 */
export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  const env = options.env ?? process.env;
  if (options.db) return openSqliteStore(resolve(options.cwd ?? process.cwd(), options.db), { ...options.sqlite, env });
  const url = options.url ?? env.SAGE_DATABASE_URL;
  if (url) {
    return openPostgresStore(url, {
      ...options.postgres,
      schema: options.postgres?.schema ?? env.SAGE_DATABASE_SCHEMA,
      urlSource: options.url ? 'The database URL' : 'SAGE_DATABASE_URL',
    });
  }
  return openSqliteStore(resolve(options.cwd ?? process.cwd(), DEFAULT_SQLITE_PATH), { ...options.sqlite, env });
}
