import { openPostgresStore } from '../store/open-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../store/test-support/postgres-test-db.js';
import { describeCrashRecovery } from './test-support/crash-suite.js';

describeCrashRecovery({
  name: 'Postgres',
  prepare: async () => {
    const schema = testSchemaName('crash');
    // Migrate before the child starts, so the child and the parent never race to create the schema.
    await (await openPostgresStore(TEST_DATABASE_URL, { schema, max: 1 })).close();
    return { args: { url: TEST_DATABASE_URL, schema }, open: () => openPostgresStore(TEST_DATABASE_URL, { schema, max: 4 }), cleanup: () => dropSchema(schema) };
  },
});
