import { StoreVersionError } from './errors.js';
import type { SqlDriver } from './sql/driver.js';

/**
 * Versioned schema changes, applied in order on open inside one transaction. Never edit a released
 * migration: add the next one. Times are epoch milliseconds (BIGINT) in both dialects; JSON bodies
 * are TEXT so the bytes a step writes are exactly what it added.
 */
interface Migration {
  version: number;
  description: string;
  sqlite: string;
  postgres: string;
}

const v1Tables = (bigint: string, serial: string) => `
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  channel TEXT NOT NULL,
  task TEXT NOT NULL,
  options TEXT NOT NULL,
  owner TEXT,
  lease_expires_at ${bigint},
  pending_interaction_id TEXT,
  final_text TEXT,
  error TEXT,
  created_at ${bigint} NOT NULL,
  updated_at ${bigint} NOT NULL,
  finished_at ${bigint}
);
CREATE INDEX runs_status_lease ON runs (status, lease_expires_at);
CREATE INDEX runs_user ON runs (user_id, created_at);
CREATE INDEX runs_session ON runs (session_id, created_at);
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX runs_finished ON runs (finished_at);
CREATE TABLE run_events (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  at TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE run_checkpoints (
  run_id TEXT PRIMARY KEY,
  format INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  step INTEGER NOT NULL,
  state TEXT NOT NULL,
  message_count INTEGER NOT NULL,
  tool_history_count INTEGER NOT NULL,
  compactions INTEGER NOT NULL,
  updated_at ${bigint} NOT NULL
);
CREATE TABLE run_messages (
  run_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE run_tool_history (
  run_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE tool_calls (
  run_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  input TEXT NOT NULL,
  status TEXT NOT NULL,
  waiting INTEGER NOT NULL DEFAULT 0,
  passed_ask INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  started_at ${bigint} NOT NULL,
  finished_at ${bigint},
  PRIMARY KEY (run_id, tool_call_id)
);
CREATE TABLE interactions (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  tool_call_id TEXT,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  request TEXT NOT NULL,
  response TEXT,
  answered_by TEXT,
  answered_at TEXT,
  reason TEXT,
  expires_at ${bigint},
  created_at ${bigint} NOT NULL,
  closed_at ${bigint},
  consumed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX interactions_run ON interactions (run_id);
CREATE INDEX interactions_status ON interactions (status, expires_at);
CREATE TABLE user_permissions (
  user_id TEXT NOT NULL,
  rule TEXT NOT NULL,
  behavior TEXT NOT NULL,
  created_at ${bigint} NOT NULL,
  created_by TEXT,
  PRIMARY KEY (user_id, rule, behavior)
);
CREATE TABLE audit_log (
  id ${serial},
  at ${bigint} NOT NULL,
  run_id TEXT,
  user_id TEXT,
  tool_call_id TEXT,
  tool_name TEXT,
  behavior TEXT NOT NULL,
  reason TEXT NOT NULL,
  source TEXT NOT NULL,
  rule TEXT,
  data TEXT
);
CREATE INDEX audit_run ON audit_log (run_id);
CREATE INDEX audit_user ON audit_log (user_id, at);
`;

/**
 * v3: a run waiting in memory names its pending request (before, only a suspended one did), and a run
 * whose pending request is its next-message ask is `idle` (before: `running` or `suspended`). The
 * newest pending request is the one named, as the server used to show it. Only data changes.
 */
const v3Status = (purpose: string) => `
UPDATE runs SET pending_interaction_id = (
  SELECT i.id FROM interactions i WHERE i.run_id = runs.id AND i.status = 'pending' ORDER BY i.created_at DESC, i.id DESC LIMIT 1
) WHERE status = 'running' AND pending_interaction_id IS NULL;
UPDATE runs SET status = 'idle' WHERE status IN ('running', 'suspended') AND pending_interaction_id IN (
  SELECT i.id FROM interactions i WHERE i.status = 'pending' AND i.kind = 'input' AND ${purpose} = 'next-message'
)
`;

/**
 * v4: the chat queue (channels): messages that arrived while their run worked wait here for its
 * next-message ask instead of in the server's memory. `reserved_for` names a handover in progress.
 */
const v4ChatQueue = (bigint: string, serial: string) => `
CREATE TABLE chat_queue (
  seq ${serial},
  session_key TEXT NOT NULL,
  message TEXT NOT NULL,
  reserved_for TEXT,
  queued_at ${bigint} NOT NULL
);
CREATE INDEX chat_queue_session ON chat_queue (session_key, seq);
CREATE INDEX chat_queue_reserved ON chat_queue (reserved_for)
`;

/**
 * v5: a run's requests by status. Answering settles the run's wait with "the run's newest pending
 * request" (and a cancel closes the run's pending ones); with only `interactions_run` and
 * `interactions_status`, SQLite's planner took the status index for `run_id = ? AND status =
 * 'pending'` and walked every pending request of every run — with 1,000 runs waiting, each answer
 * read 1,000 rows. This index serves those lookups by run, status and age, and replaces
 * `interactions_run`, whose column it starts with.
 */
const v5RunStatus = `
CREATE INDEX interactions_run_status ON interactions (run_id, status, created_at);
DROP INDEX interactions_run
`;

/**
 * v6: the event log holds one row per commit — the events a write appends, as one JSON array of
 * `[seq, type, at, data]` covering `first_seq`..`last_seq` — instead of one row per event. A
 * released approval cycle appends ~24 events in 2 commits; as rows they were ~24 b-tree cells plus
 * ~24 entries in the primary key's index, and SQLite in WAL mode writes every page a commit touches
 * whole (bench/commits.ts: the events' table and index were ~10 of ~31 4 KiB WAL frames per cycle,
 * split pages and interior pages included). A batch is one cell and one index entry. Existing events
 * become batches of one (their order and seqs kept); the table keeps its name.
 */
const v6EventBatches = (batch: string) => `
CREATE TABLE run_events_v6 (
  run_id TEXT NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  events TEXT NOT NULL,
  PRIMARY KEY (run_id, first_seq)
);
INSERT INTO run_events_v6 (run_id, first_seq, last_seq, events) SELECT run_id, seq, seq, ${batch} FROM run_events ORDER BY run_id, seq;
DROP TABLE run_events;
ALTER TABLE run_events_v6 RENAME TO run_events
`;

/**
 * v8: the released runs a maintenance pass looks through for one to wake (listWakeableRuns), by
 * the columns it filters on. A run's row holds its options, system prompt included (~4 KB: eight
 * overflow pages at 512 B), before `owner` and `pending_interaction_id`; through
 * `runs_status_lease` SQLite read every idle run's overflow chain to reach them. With 1,000
 * finished chats released as idle that held the event loop 100-150 ms every maintenance pass
 * (bench/channels.ts: the tail of tap → tool start at 20 taps a second). Here the filter is read
 * from the index and only a run it keeps is read from the table.
 */
const v8Released = 'CREATE INDEX runs_released ON runs (status, owner, lease_expires_at, pending_interaction_id, updated_at)';

/**
 * v9: a run's options (its system prompt: ~4 KB, eight overflow pages at 512 B) move to their own
 * table, written once and read when a run is built. In the `runs` row they came before the columns
 * every claim, fence and lease renewal reads and indexes (owner, lease_expires_at,
 * pending_interaction_id, updated_at), so each of those writes read the row's whole overflow chain:
 * a server renewing 1,000 waiting runs' leases held its event loop ~60 ms every pass
 * (bench/channels.ts, 5-6 ms per 64 rows). Raw SQLite, 1,000 runs: 4.0 → 0.9 ms per 64 renewals.
 */
const v9RunOptions = `
CREATE TABLE run_options (
  run_id TEXT PRIMARY KEY,
  options TEXT NOT NULL
);
INSERT INTO run_options (run_id, options) SELECT id, options FROM runs;
ALTER TABLE runs DROP COLUMN options
`;

/**
 * v10: one index on runs by (status, lease_expires_at, owner, …) instead of two that both begin with
 * status: `runs_status_lease` (status, lease_expires_at) and v8's `runs_released` (status, owner,
 * lease_expires_at, pending_interaction_id, updated_at). Every claim and release changes status,
 * owner and lease together, so each commit of an approval cycle rewrote an entry in both. The
 * orphan lookups search the new index by status and a lease range, the wake lookup by status and a
 * null lease and owner, as before, and read the rest of its filter from it. bench/commits.ts: one
 * b-tree fewer per commit (~2 WAL frames a released cycle).
 */
const v10RunsIndex = `
DROP INDEX runs_released;
DROP INDEX runs_status_lease;
CREATE INDEX runs_status_lease ON runs (status, lease_expires_at, owner, pending_interaction_id, updated_at)
`;

/**
 * v11: the inbound delivery ids the chat channels have seen (a webhook's signature, Telegram's
 * update_id, Slack's event_id, WhatsApp's message id, Feishu's event_id), each until it expires.
 * The primary key is what makes "first time seen?" one atomic insert on both backends, so several
 * servers over one database, and a restarted one, agree on it.
 */
const v11ChannelSeenIds = (bigint: string) => `
CREATE TABLE channel_seen_ids (
  channel TEXT NOT NULL,
  seen_id TEXT NOT NULL,
  expires_at ${bigint} NOT NULL,
  PRIMARY KEY (channel, seen_id)
);
CREATE INDEX channel_seen_ids_expiry ON channel_seen_ids (expires_at)
`;

/**
 * run_owners: the process behind a lease owner (an instance id in runs.owner), so that on its own
 * host a dead owner is known at once instead of when its lease runs out. Runs keep naming their
 * owner as before: a run whose owner has no row here (written before v12, or by another host) is
 * judged by its lease alone.
 */
const v12RunOwners = (bigint: string) => `
CREATE TABLE run_owners (
  owner TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  boot_id TEXT,
  start_time TEXT,
  created_at ${bigint} NOT NULL
);
CREATE INDEX run_owners_host ON run_owners (host)
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs, event log, checkpoints with message and tool-history logs, tool calls, interactions, user permissions, audit log',
    sqlite: v1Tables('INTEGER', 'INTEGER PRIMARY KEY AUTOINCREMENT'),
    postgres: v1Tables('BIGINT', 'BIGSERIAL PRIMARY KEY'),
  },
  {
    version: 2,
    description: 'runs.epoch: a claim counter, bumped by every claim, so writes are fenced per claim rather than per instance',
    sqlite: 'ALTER TABLE runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0',
    postgres: 'ALTER TABLE runs ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0',
  },
  {
    version: 3,
    description:
      "run status `idle` (waits for the next message) and pending_interaction_id kept while a run waits in memory: existing runs are brought to what v3 would have written",
    sqlite: v3Status("json_extract(i.request, '$.metadata.purpose')"),
    postgres: v3Status("(i.request::jsonb #>> '{metadata,purpose}')"),
  },
  {
    version: 4,
    description: 'chat_queue: chat messages queued for a working run survive a restart of the server',
    sqlite: v4ChatQueue('INTEGER', 'INTEGER PRIMARY KEY AUTOINCREMENT'),
    postgres: v4ChatQueue('BIGINT', 'BIGSERIAL PRIMARY KEY'),
  },
  {
    version: 5,
    description: "interactions_run_status: a run's requests by status and age (answering looks up the run's newest pending request), replacing interactions_run",
    sqlite: v5RunStatus,
    postgres: v5RunStatus,
  },
  {
    version: 6,
    description: 'run_events: one row per write (a JSON array of its events, first_seq..last_seq) instead of one per event; existing events become batches of one',
    sqlite: v6EventBatches('json_array(json_array(seq, type, at, json(data)))'),
    postgres: v6EventBatches('json_build_array(json_build_array(seq, type, at, data::json))::text'),
  },
  {
    // No statement: rows written before keep their strings and read as before (queries/writes.ts,
    // encodeEvents). The version is what keeps an older Sage, which reads `at` as a string only, from
    // opening a log it would misread.
    version: 7,
    description: "run_events batches: an event's time is the milliseconds since the batch's previous event when its ISO string round-trips; v6 batches read as before",
    sqlite: '',
    postgres: '',
  },
  {
    version: 8,
    description: 'runs_released: the released runs a maintenance pass may wake, found from an index instead of every idle row',
    sqlite: v8Released,
    postgres: v8Released,
  },
  {
    version: 9,
    description: "run_options: a run's options (its system prompt) in their own table, out of the runs row that claims, fences and lease renewals rewrite",
    sqlite: v9RunOptions,
    postgres: v9RunOptions,
  },
  {
    version: 10,
    description: 'runs_status_lease: one index on runs by status, lease, owner, awaited request and age, replacing runs_status_lease and runs_released (each claim and release rewrote an entry in both)',
    sqlite: v10RunsIndex,
    postgres: v10RunsIndex,
  },
  {
    version: 11,
    description: 'channel_seen_ids: inbound delivery ids (signatures, update and event ids) the chat channels have seen, until they expire, so a replay or redelivery is handled once across restarts and servers',
    sqlite: v11ChannelSeenIds('INTEGER'),
    postgres: v11ChannelSeenIds('BIGINT'),
  },
  {
    version: 12,
    description: "run_owners: each lease owner's host, pid, boot id and process start time, so a dead owner on the same host is noticed at once (a reused pid is not taken for it)",
    sqlite: v12RunOwners('INTEGER'),
    postgres: v12RunOwners('BIGINT'),
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Brings the database to the latest schema. A database newer than this code is refused before
 * anything is written, so an old binary never corrupts a newer store.
 */
export async function migrate(driver: SqlDriver, migrations: readonly Migration[] = MIGRATIONS): Promise<number> {
  const latest = migrations[migrations.length - 1]!.version;
  if (driver.dialect === 'postgres') {
    const schema = (driver as { schema?: string }).schema ?? 'public';
    await driver.execute(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  }
  return driver.transaction(async (tx) => {
    // Two instances starting at once: the second waits here, then finds nothing left to do.
    if (driver.dialect === 'postgres') await tx.query("SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':sage_migrate'))");
    await tx.execute('CREATE TABLE IF NOT EXISTS sage_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    const rows = await tx.query<{ value: string }>("SELECT value FROM sage_meta WHERE key = 'schema_version'");
    const current = rows[0] ? Number(rows[0].value) : 0;
    if (current > latest) throw new StoreVersionError(driver.location, current, latest);
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      const sql = driver.dialect === 'sqlite' ? migration.sqlite : migration.postgres;
      for (const statement of sql.split(';').map((s) => s.trim()).filter(Boolean)) await tx.execute(statement);
    }
    if (latest !== current) {
      await tx.execute(
        "INSERT INTO sage_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [String(latest)],
      );
    }
    return latest;
  });
}
