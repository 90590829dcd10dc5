import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from './errors.js';
import { openPostgresStore, openStore } from './open-store.js';
import { PostgresDriver } from './sql/postgres-driver.js';
import { describeStoreContract, describeUpgradeFromV1 } from './test-support/store-contract.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './test-support/postgres-test-db.js';

const schema = testSchemaName('store');
describeStoreContract({
  name: 'Postgres',
  openFresh: () => openPostgresStore(TEST_DATABASE_URL, { schema }),
  openSame: () => openPostgresStore(TEST_DATABASE_URL, { schema }),
  cleanup: () => dropSchema(schema),
});

const v1Schema = testSchemaName('v1');
describeUpgradeFromV1(
  'Postgres',
  async () => new PostgresDriver(TEST_DATABASE_URL, { schema: v1Schema }),
  () => openPostgresStore(TEST_DATABASE_URL, { schema: v1Schema }),
  () => dropSchema(v1Schema),
);

describe('Postgres selection', () => {
  it('is chosen when SAGE_DATABASE_URL is set', async () => {
    const s = testSchemaName('sel');
    try {
      const store = await openStore({ env: { SAGE_DATABASE_URL: TEST_DATABASE_URL, SAGE_DATABASE_SCHEMA: s } });
      expect(store.backend).toBe('postgres');
      expect(store.location).toContain(`schema ${s}`);
      await store.close();
    } finally {
      await dropSchema(s);
    }
  });

  it('reports an unreachable server as one clear error', async () => {
    await expect(openPostgresStore('postgres://postgres@127.0.0.1:1/test')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
