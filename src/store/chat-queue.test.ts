import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore, openSqliteStore } from './open-store.js';
import { PostgresDriver } from './sql/postgres-driver.js';
import { SqliteDriver } from './sql/sqlite-driver.js';
import { describeChatQueueContract, describeUpgradeFromV3 } from './test-support/chat-queue-contract.js';
import { postgresBackend, sqliteBackend } from './test-support/contract-backends.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from './test-support/postgres-test-db.js';

// The chat queue's store methods on both backends (SQLite in a temp folder, Postgres at
// TEST_DATABASE_URL in a fresh schema).

describeChatQueueContract(sqliteBackend('sage-chat-queue-'));
describeChatQueueContract(postgresBackend('chatq'));

const v3Dir = mkdtempSync(join(tmpdir(), 'sage-v3-'));
describeUpgradeFromV3(
  'SQLite',
  async () => new SqliteDriver(join(v3Dir, 'sage.db')),
  () => openSqliteStore(join(v3Dir, 'sage.db')),
  async () => rmSync(v3Dir, { recursive: true, force: true }),
);

const v3Schema = testSchemaName('v3');
describeUpgradeFromV3(
  'Postgres',
  async () => new PostgresDriver(TEST_DATABASE_URL, { schema: v3Schema }),
  () => openPostgresStore(TEST_DATABASE_URL, { schema: v3Schema }),
  () => dropSchema(v3Schema),
);
