import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore, openSqliteStore } from '../open-store.js';
import type { SqlStore } from '../sql-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './postgres-test-db.js';

/** How a backend's test file opens stores for a shared contract suite. */
export interface ContractBackend {
  name: string;
  /** A fresh, empty database (a new file, a new schema). */
  openFresh(): Promise<SqlStore>;
  /** Another connection (another "instance") to the database the last openFresh() made. */
  openSame(): Promise<SqlStore>;
  cleanup(): Promise<void>;
}

/** SQLite in a temp folder named with `prefix`. */
export function sqliteBackend(prefix: string): ContractBackend {
  let dir = '';
  return {
    name: 'SQLite',
    openFresh: async () => {
      dir = mkdtempSync(join(tmpdir(), prefix));
      return openSqliteStore(join(dir, 'sage.db'));
    },
    openSame: () => openSqliteStore(join(dir, 'sage.db')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Postgres at TEST_DATABASE_URL in a fresh schema tagged `tag`, dropped at cleanup. */
export function postgresBackend(tag: string): ContractBackend {
  const schema = testSchemaName(tag);
  return {
    name: 'Postgres',
    openFresh: () => openPostgresStore(TEST_DATABASE_URL, { schema }),
    openSame: () => openPostgresStore(TEST_DATABASE_URL, { schema }),
    cleanup: () => dropSchema(schema),
  };
}
