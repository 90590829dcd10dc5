import pg from 'pg';
import { join, resolve } from 'node:path';
import { SageError } from '../errors/index.js';
import { StoreUnavailableError } from './errors.js';
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
 * Opens (and migrates) the Postgres store. Notifications go through LISTEN/NOTIFY on a channel
 * named after the schema, so any instance sharing the database hears every commit.
 */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<SqlStore> {
  const driver = new PostgresDriver(url, options);
  const hub = new NotificationHub();
  const channel = `sage_${driver.schema}`;
  let listener: pg.Client | undefined;
  let listening: Promise<void> | undefined;
  let closed = false;
  const transport: NotificationTransport = {
    inTx: async (tx: SqlTx, n: StoreNotification) => {
      // pg_notify inside the transaction is delivered on commit, and dropped on rollback.
      await tx.query('SELECT pg_notify(?, ?)', [channel, JSON.stringify(n)]);
    },
    publish: async (n) => {
      await driver.query('SELECT pg_notify(?, ?)', [channel, JSON.stringify(n)]);
    },
    listen: () => {
      listening ??= (async () => {
        const client = new pg.Client({ connectionString: url });
        client.on('notification', (message) => {
          if (message.channel !== channel || !message.payload) return;
          try {
            hub.deliver(JSON.parse(message.payload) as StoreNotification);
          } catch {
            // Not ours (a foreign payload on the channel): ignore it.
          }
        });
        // A dropped LISTEN connection must not crash the process; leases and sweeps still recover runs.
        client.on('error', () => {
          listening = undefined;
        });
        await client.connect();
        await client.query(`LISTEN ${channel}`);
        if (closed) await client.end();
        else listener = client;
      })();
      return listening;
    },
    close: async () => {
      closed = true;
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
  if (url) return openPostgresStore(url, { ...options.postgres, schema: options.postgres?.schema ?? env.SAGE_DATABASE_SCHEMA });
  return openSqliteStore(resolve(options.cwd ?? process.cwd(), DEFAULT_SQLITE_PATH), { ...options.sqlite, env });
}
