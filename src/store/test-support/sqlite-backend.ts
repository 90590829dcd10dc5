import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../open-store.js';
import type { SqlStore } from '../sql-store.js';

// Apart from the Postgres backend so a SQLite-only suite reaches no Postgres (test/lanes.ts).

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
