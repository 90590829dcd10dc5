import { describeChannelSeenIdsContract } from './test-support/channel-seen-ids-contract.js';
import { postgresBackend, sqliteBackend } from './test-support/contract-backends.js';

// The channels' seen-id table on both backends (SQLite in a temp folder, Postgres at
// TEST_DATABASE_URL in a fresh schema).

describeChannelSeenIdsContract(sqliteBackend('sage-seen-ids-'));
describeChannelSeenIdsContract(postgresBackend('seenids'));
