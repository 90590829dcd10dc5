import { join, resolve } from 'node:path';
import { SageError } from '../errors/index.js';
import { StoreUnavailableError, StoreUrlError } from './errors.js';
import { migrate } from './migrations.js';
import { prepareSqliteFile } from './sqlite-file.js';
import { NotificationHub } from './notification-hub.js';
import { SqlStore } from './sql-store.js';
import { inProcessTransport } from './sql/notification-transport.js';
import type { PostgresOptions } from './sql/postgres-driver.js';
import type { SqliteOptions } from './sql/sqlite-driver.js';
import type { Store } from './types.js';

// The drivers (better-sqlite3, pg) are imported only when their backend opens: a SQLite user never
// loads pg, and a Postgres deployment never loads the native SQLite module.

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
export async function openSqliteStore(path: string, options: SqliteOptions & { env?: NodeJS.ProcessEnv; sageFolder?: boolean } = {}): Promise<SqlStore> {
  const location = path === ':memory:' ? path : resolve(path);
  const { env, sageFolder, ...sqlite } = options;
  const synchronous = sqlite.synchronous ?? sqliteSynchronousFromEnv(env ?? process.env, location);
  const { SqliteDriver } = await import('./sql/sqlite-driver.js');
  if (location !== ':memory:') {
    try {
      prepareSqliteFile(location, { sageFolder: sageFolder === true });
    } catch (error) {
      throw new StoreUnavailableError(location, (error as Error).message, { cause: error });
    }
  }
  const driver = new SqliteDriver(location, { ...sqlite, ...(synchronous ? { synchronous } : {}) });
  const hub = hubFor(location);
  const transport = inProcessTransport(hub);
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
 * named after the schema, so any instance sharing the database hears every commit
 * (`sql/postgres-notifications.ts`).
 */
export async function openPostgresStore(url: string, options: PostgresOptions & { urlSource?: string } = {}): Promise<SqlStore> {
  assertPostgresUrl(url, options.urlSource);
  const [{ PostgresDriver }, { postgresTransport }] = await Promise.all([import('./sql/postgres-driver.js'), import('./sql/postgres-notifications.js')]);
  const driver = new PostgresDriver(url, options);
  const hub = new NotificationHub();
  const transport = postgresTransport(driver, url, hub);
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
  return openSqliteStore(resolve(options.cwd ?? process.cwd(), DEFAULT_SQLITE_PATH), { ...options.sqlite, env, sageFolder: true });
}
