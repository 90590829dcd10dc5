import { openPostgresStore } from '../open-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './postgres-test-db.js';
import type { ContractBackend } from './sqlite-backend.js';

export { sqliteBackend, type ContractBackend } from './sqlite-backend.js';

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
