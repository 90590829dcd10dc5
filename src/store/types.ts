import type { StoreHealthReport } from './store-faults.js';
import type { RunEvent } from '../events/index.js';
import type { InteractionRequest, InteractionResponse, PriorOutcome } from '../interaction/index.js';
import type { JsonText } from './json-text.js';

/**
 * The Store contract: everything a durable run needs to survive a restart, and everything a server
 * needs to show and answer runs. Two backends implement it (SQLite, Postgres) and one contract test
 * suite runs against both. Times are ISO-8601 strings in records; JSON bodies are plain values.
 */
export const STORE_SPECIFICATION_VERSION = 'sage.store.v1' as const;

/**
 * Where a run is.
 * - `running`: an owner (an instance) drives it under a lease. It may be waiting for an approval or
 *   a question in memory: then `pendingInteractionId` names that request.
 * - `idle`: it finished its answer and waits for the person's next message (`pendingInteractionId`
 *   is that ask). In memory (an owner and a lease, like `running`) or released (no owner, like
 *   `suspended`). Answering the ask makes it `running` again; closing it ends the run `completed`.
 * - `suspended`: released from memory while waiting for an approval or a question.
 * - `completed`, `failed`, `cancelled`, `max_steps`: finished.
 */
export type StoredRunStatus = 'running' | 'idle' | 'suspended' | 'completed' | 'failed' | 'cancelled' | 'max_steps';
export const RUN_STATUSES: readonly StoredRunStatus[] = ['running', 'idle', 'suspended', 'completed', 'failed', 'cancelled', 'max_steps'];
export const FINISHED_STATUSES: readonly StoredRunStatus[] = ['completed', 'failed', 'cancelled', 'max_steps'];

export interface RunRecord {
  id: string;
  status: StoredRunStatus;
  userId: string;
  sessionId: string;
  channel: string;
  task: string;
  /** The durable runner's options (model spec, mode, limits): JSON, versioned by the runner. */
  options: Record<string, unknown>;
  /** The instance driving the run, while `running`. */
  owner: string | null;
  /**
   * The claim counter: bumped by every claim (createRun, claimRun, claimOrphans, an orphan write).
   * A driver writes with the epoch it claimed, so a late write of an older incarnation of the run —
   * even one in the same instance — is refused (LeaseLostError).
   */
  epoch: number;
  leaseExpiresAt: string | null;
  /**
   * The request the run waits for, in memory or suspended (set in the same transaction that saves
   * the request; cleared when it is answered or closed while the run is driven). A released run
   * keeps it until it is resumed, so a sweep can tell its request was settled.
   */
  pendingInteractionId: string | null;
  finalText: string | null;
  error: { code: string; message: string } | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface NewRun {
  id: string;
  userId: string;
  sessionId: string;
  channel: string;
  task: string;
  options: Record<string, unknown>;
}

export interface RunQuery {
  status?: readonly StoredRunStatus[];
  userId?: string;
  sessionId?: string;
  /** Newest first; default 100. */
  limit?: number;
}

/** Bumped when the checkpoint's shape changes; older formats are migrated on load or refused. */
export const CHECKPOINT_FORMAT = 1 as const;

/**
 * A checkpoint: the loop's small state and the event seq it covers. The conversation and the tool
 * history are not copied into it; they live in append-only logs and the checkpoint says how many
 * entries of each it covers, so a step writes only what it added.
 */
export interface Checkpoint {
  format: typeof CHECKPOINT_FORMAT;
  /** The last event seq this checkpoint covers. */
  seq: number;
  step: number;
  /** The loop state without `messages` and `toolHistory` (JSON). */
  state: Record<string, unknown>;
  messageCount: number;
  toolHistoryCount: number;
  /** How many times the conversation was rewritten (compaction); a change rewrites the message log. */
  compactions: number;
}

/** A checkpoint with the log entries it covers, as a resumed run needs them. */
export interface LoadedCheckpoint {
  checkpoint: Checkpoint;
  messages: unknown[];
  toolHistory: unknown[];
  /** The highest event seq logged for the run (may be past the checkpoint's). */
  lastSeq: number;
}

/**
 * What resuming a released run reads (Store.loadRunForResume), in one statement: the run, its
 * checkpoint with the log entries it covers, its last event seq, and its calls without a result.
 */
export interface RunResumeState {
  run: RunRecord;
  /** As loadCheckpoint; undefined before the first checkpoint. */
  checkpoint: LoadedCheckpoint | undefined;
  /** The highest event seq logged for the run (0 when none), as lastEventSeq. */
  lastSeq: number;
  /** As listToolCalls with `unfinished`. */
  unfinishedCalls: ToolCallRecord[];
}

/**
 * A tool call whose side effect was started. `started` with no result after a crash means the call
 * was executing when the process died: it is reported as interrupted, never re-run silently —
 * unless it was blocked on its first ask (`waiting` and not `passedAsk`), when re-running it only
 * replays the code up to that ask.
 */
export interface ToolCallRecord {
  runId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  status: 'started' | 'completed' | 'interrupted';
  waiting: boolean;
  passedAsk: boolean;
  result: { content: string; isError: boolean } | null;
  startedAt: string;
  finishedAt: string | null;
}

export type InteractionStatus = 'pending' | 'answered' | 'expired' | 'cancelled';

export interface InteractionRecord {
  id: string;
  runId: string;
  toolCallId: string | null;
  kind: InteractionRequest['kind'];
  status: InteractionStatus;
  request: InteractionRequest;
  response: InteractionResponse | null;
  answeredBy: string | null;
  answeredAt: string | null;
  /** Why it was closed without an answer. */
  reason: string | null;
  expiresAt: string | null;
  createdAt: string;
  closedAt: string | null;
  /** A live loop received the outcome (an answer handed to running code is never handed again). */
  consumed: boolean;
}

export interface InteractionQuery {
  runId?: string;
  /** Only these requests (by id): a runner asking which of the requests it waits for were settled elsewhere. */
  ids?: readonly string[];
  status?: readonly InteractionStatus[];
  userId?: string;
  /**
   * Only answers that may remember a rule for their run ("always for this run", `remember: 'session'`):
   * what a rebuilt gate restores, without reading every answer of a long run on each resume. A
   * prefilter on the stored text: the caller still checks each response.
   */
  remembersForRun?: boolean;
  limit?: number;
}

/**
 * One durable write of a run, committed in a single transaction and fenced by ownership: when
 * `owner` no longer holds the run (another instance took it over), nothing is written and
 * LeaseLostError is thrown. Every part is optional.
 */
export interface RunWrite {
  runId: string;
  owner: string;
  /**
   * The claim this write belongs to (RunRecord.epoch as claimed). When given, the write is refused
   * unless it is still the run's current claim: fencing per claim, not only per instance. The
   * durable runner always passes it.
   */
  epoch?: number;
  /** Events to append, in seq order (append-only; a seq already logged is an error). */
  events?: readonly RunEvent[];
  /**
   * Conversation entries from index `from`; `replace` rewrites the log first (after a compaction).
   * An entry (and the checkpoint's state) may be a JsonText: already encoded, stored as it is.
   */
  messages?: { from: number; items: readonly unknown[]; replace?: boolean };
  toolHistory?: { from: number; items: readonly unknown[] };
  checkpoint?: Checkpoint | (Omit<Checkpoint, 'state'> & { state: JsonText });
  /** Record before a tool's side effect starts. */
  toolIntent?: { toolCallId: string; toolName: string; input: unknown };
  /** Results of calls whose intent was recorded. */
  toolResults?: readonly { toolCallId: string; result: { content: string; isError: boolean } }[];
  /** Calls reported to the model as interrupted by a restart. */
  interruptedToolCalls?: readonly string[];
  /**
   * Requests committed with this write (a run released at its ask: the request, the step before it
   * and the suspension in one transaction). Inserted as `saveInteraction` would, a request already
   * stored left as it is; the run names the last one as pending unless `run` says otherwise.
   */
  asks?: readonly InteractionRequest[];
  /**
   * Claim the run, released at claim `epoch` (suspended or idle, no owner), for `owner` with this
   * write, and record `answer` (pending until now; consumed: the loop has it) first: an answer to a
   * released run resumes it with one commit — this write, which also carries what the resumed loop
   * did up to it (the call's intent). `epoch` of the write is then `claim.epoch + 1`. Either
   * compare-and-set failing refuses the whole write (LeaseLostError, or the answer's refusal).
   */
  claim?: { epoch: number; leaseMs: number; answer: { interactionId: string; response: InteractionResponse } };
  /**
   * Answers to requests of this run, given to its loop waiting here, recorded (consumed) with this
   * write instead of a commit each: a request no longer pending refuses the whole write.
   */
  answers?: readonly { interactionId: string; response: InteractionResponse }[];
  /**
   * Settled requests whose outcome reached the loop since the last commit (a resumed run's ask found
   * its answer): marked consumed with this write. Only for asks made before their call's intent was
   * recorded (a permission ask): the intent in this same write is what makes re-running unsafe.
   */
  consumeInteractions?: readonly string[];
  /**
   * Permission decisions and answers of this run's gate (its audit trail), committed with this
   * write: a decision lands with what it led to (the call's intent, its request, its result) in one
   * transaction, not in a commit of its own before it (the same rows as appendAudit).
   */
  audit?: readonly AuditEntry[];
  /** Status change; `release` drops the owner and lease (suspended and finished runs have none). */
  run?: {
    status?: StoredRunStatus;
    pendingInteractionId?: string | null;
    finalText?: string | null;
    error?: { code: string; message: string } | null;
    release?: boolean;
    /** Closes (cancels) every pending request of the run in the same transaction, with this reason. */
    closeInteractions?: string;
  };
}

/**
 * The part of a step's write that can ride along with another commit (a request being saved): the
 * checkpoint, the log entries it adds and the results it records.
 */
export type StepWrite = Pick<RunWrite, 'messages' | 'toolHistory' | 'checkpoint' | 'toolResults' | 'consumeInteractions' | 'asks' | 'audit'>;

export interface ClaimAnswerOptions {
  /** The loop waiting in this process takes the answer now (see saveInteraction's `announce`). */
  consumed?: boolean;
  fence?: RunFence;
  /**
   * And claim the run, in the same transaction, when it was released (suspended or idle, no
   * owner): the answering process resumes it without a second commit. `claimedRun` is the claim.
   */
  claimRun?: { owner: string; leaseMs: number };
}

/** Who writes for a run: the owner and, when known, its claim (see RunWrite.epoch). */
export interface RunFence {
  owner: string;
  epoch?: number;
}

/**
 * A chat message that arrived while its run worked (channels), kept in the store until the run's
 * next-message ask takes it, so a restart or a crash of the server does not lose it.
 */
export interface QueuedChatMessage {
  /** Assigned by the store, increasing: messages are handed over oldest first. */
  seq: number;
  /** The conversation it waits in (`channel:chatId[:threadId]`, the runs' `sessionId`). */
  sessionKey: string;
  /** The message as the channel core keeps it (JSON: sender, text, where it came from). */
  message: Record<string, unknown>;
  /** The handover it is reserved for (a token the caller chose), or null while it waits. */
  reservedFor: string | null;
  queuedAt: string;
}

/** Per-user allow/deny patterns (`Bash(npm test:*)`), kept across sessions. */
export interface UserPermissionRecord {
  userId: string;
  /** The rule as written, e.g. `Bash(git push:*)`. */
  rule: string;
  behavior: 'allow' | 'deny';
  createdAt: string;
  createdBy: string | null;
}

export interface AuditEntry {
  at: string;
  runId: string | null;
  userId: string | null;
  toolCallId: string | null;
  toolName: string | null;
  behavior: 'allow' | 'deny' | 'ask';
  reason: string;
  source: string;
  rule: string | null;
  /** Anything else worth keeping (who answered, the input hash). */
  data: Record<string, unknown> | null;
}

export interface AuditQuery {
  runId?: string;
  userId?: string;
  since?: string;
  /** Entries before this time (ISO 8601), exclusive. */
  until?: string;
  behavior?: 'allow' | 'deny' | 'ask';
  limit?: number;
}

/**
 * What a store tells subscribers. `events`: new events were committed (read them with readEvents);
 * `interaction`: an interaction changed state; `run`: a run changed status; `wake`: someone asks
 * the owner of a run to look at it again (an answer landed on another instance); `resync`: the
 * notification channel was (re)established after a gap (Postgres: the LISTEN connection dropped
 * and came back), so notifications may have been missed: re-check what you wait for. `resync` is
 * delivered to every subscriber, whatever its target.
 */
export type StoreNotification =
  /**
   * `seq` is the batch's last; `types` its events' distinct types (absent from older writers): a
   * subscriber that shows only some types skips reading a batch that has none of them.
   */
  | { type: 'events'; runId: string; seq: number; types?: string[] }
  /** `nextMessage`: a pending run's ask for its next message (a chat hands it what it queued, if anything). */
  | { type: 'interaction'; runId: string; interactionId: string; status: InteractionStatus; nextMessage?: boolean }
  | { type: 'run'; runId: string; status: StoredRunStatus; owner: string | null }
  | { type: 'wake'; runId: string; interactionId?: string; reason: string }
  | { type: 'resync'; runId: '*' };

export type Unsubscribe = () => Promise<void>;

export interface PruneResult {
  runs: number;
  events: number;
}

/**
 * The process behind a lease owner (`RunRecord.owner`): which host it runs on and which process it
 * is there. A pid alone is not enough, since the kernel hands it out again; its start time since
 * the host's boot, with the boot's id, names one process once.
 */
export interface RunOwnerRecord {
  /** The instance id that runs name as their owner. */
  owner: string;
  host: string;
  pid: number;
  /** Linux: /proc/sys/kernel/random/boot_id when the owner registered; null elsewhere. */
  bootId: string | null;
  /** Linux: the process's start time after boot (/proc/PID/stat field 22, in clock ticks); null elsewhere. */
  startTime: string | null;
}

/**
 * A durable store. All methods are safe to call from several processes (and, for Postgres, several
 * machines) at once; the compare-and-set ones (`claimRun`, `claimAnswer`, `closeInteraction`) have
 * exactly one winner.
 */
export interface Store {
  readonly specificationVersion: typeof STORE_SPECIFICATION_VERSION;
  readonly backend: 'sqlite' | 'postgres';
  /** Where it lives, for messages (a file path, or a URL without its password). */
  readonly location: string;

  // Runs
  createRun(run: NewRun, owner: { id: string; leaseMs: number } | null): Promise<RunRecord>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  listRuns(query?: RunQuery): Promise<RunRecord[]>;
  /** How many runs match, counted up to `limit` (a limit check reads no run). */
  countRuns(query: RunQuery & { limit: number }): Promise<number>;
  /** Ids of runs that start with `prefix` exactly (case-sensitive; `%` and `_` are plain characters), in id order, at most `limit`. */
  findRunIds(prefix: string, limit: number): Promise<string[]>;

  // Ownership
  /**
   * Takes a run to drive it: compare-and-set from one of `from` (a suspended run, or a running run
   * whose lease expired or is already `owner`'s) to `running` owned by `owner`. Returns undefined
   * when someone else holds it or it is in another status.
   */
  claimRun(runId: string, owner: string, leaseMs: number, from: readonly StoredRunStatus[]): Promise<RunRecord | undefined>;
  /** Claims up to `limit` running runs whose lease expired (a dead instance's); skips rows others are claiming. */
  claimOrphans(owner: string, leaseMs: number, limit: number, options?: { exclude?: readonly string[] }): Promise<RunRecord[]>;
  /** Extends the leases `owner` still holds among `runIds`; returns those ids (a missing one was lost). */
  renewLeases(owner: string, runIds: readonly string[], leaseMs: number): Promise<string[]>;
  /** Records (or replaces) the process behind lease owner `record.owner`. */
  registerOwner(record: RunOwnerRecord): Promise<void>;
  /** Forgets an owner's process (it closed: runs it still names are judged by their lease). */
  forgetOwner(owner: string): Promise<void>;
  /** The processes behind these owners, where known (an owner without a row is judged by its lease). */
  getOwners(owners: readonly string[]): Promise<RunOwnerRecord[]>;
  /** Owners registered on `host` (those that closed are forgotten; dead ones when found dead). */
  listOwnersOnHost(host: string): Promise<RunOwnerRecord[]>;
  /**
   * Ends the leases of an owner found dead, in one transaction with forgetting it: its running and
   * idle runs become orphans that claimOrphans (or a claimRun) takes at once. Returns their ids.
   */
  expireOwner(owner: string): Promise<string[]>;
  /**
   * Released runs (suspended, or idle with no owner) whose awaited request is no longer pending, or
   * which await none: what a maintenance pass resumes. Up to `limit`, oldest change first.
   */
  listWakeableRuns(limit: number): Promise<RunRecord[]>;
  /** Ids of runs `claimOrphans` would claim at `now` (epoch ms), up to `limit`; reads only. */
  listOrphanCandidates(now: number, limit: number): Promise<string[]>;

  // The run's durable history
  /** Commits one fenced write (see RunWrite). */
  write(write: RunWrite): Promise<void>;
  /**
   * Appends events for a run nobody drives (cancelling a suspended run); seqs continue the log.
   * Throws RunBusyError when a live instance holds the run.
   */
  appendOrphanEvents(runId: string, make: (nextSeq: number) => RunEvent[], run?: RunWrite['run']): Promise<RunEvent[]>;
  /** Events with seq > afterSeq, in order (SSE replay with Last-Event-ID). */
  readEvents(runId: string, options?: { afterSeq?: number; limit?: number }): Promise<RunEvent[]>;
  /** The latest checkpoint with the log entries it covers; undefined before the first one. */
  loadCheckpoint(runId: string): Promise<LoadedCheckpoint | undefined>;
  /** The highest event seq logged for the run (0 when none). */
  lastEventSeq(runId: string): Promise<number>;
  /** `unfinished`: only the calls without a result (started or interrupted), what a resume needs: not the whole run's. */
  listToolCalls(runId: string, options?: { unfinished?: boolean }): Promise<ToolCallRecord[]>;
  /**
   * getRun, loadCheckpoint (or lastEventSeq) and listToolCalls with `unfinished`, in one read of one
   * snapshot: what an answer to a released run reads to rebuild it. Undefined when the run does not exist.
   */
  loadRunForResume(runId: string): Promise<RunResumeState | undefined>;

  // Interactions
  /**
   * Commits a request before anyone can see it (with the events that led to it, fenced like
   * `write` when `fence` is given). When the id exists already (a resumed run asks again), returns
   * how it ended, or `pending`; an outcome handed to a loop for the first time is marked consumed
   * and comes back with `announce: true` so the loop logs it once. With a fence, a request that is
   * (still) pending becomes the run's `pendingInteractionId` in the same transaction, and a
   * next-message ask (`isNextMessageRequest`) makes the run `idle`.
   */
  saveInteraction(request: InteractionRequest, fence?: RunFence & { events: readonly RunEvent[]; step?: StepWrite }): Promise<(PriorOutcome & { announce?: boolean }) | undefined>;
  /**
   * The first valid answer wins: compare-and-set pending → answered in one transaction. Throws
   * InteractionAlreadyAnsweredError (with who and when), InteractionExpiredError,
   * InteractionCancelledError or InteractionNotFoundError otherwise. `consumed`: the answer goes
   * straight to a loop waiting in this process. `fence`: claimed by the run's driver, refused with
   * LeaseLostError (nothing written) when that claim is no longer current.
   */
  claimAnswer(interactionId: string, response: InteractionResponse, options?: ClaimAnswerOptions): Promise<InteractionRecord & { claimedRun?: RunRecord }>;
  /**
   * pending → expired | cancelled; false when it was not pending. Fenced like claimAnswer when `fence`
   * is given. (Like claimAnswer and expireDue: when the run is driven and waited for this request,
   * its `pendingInteractionId` moves to its next pending request, or null, and `idle` becomes `running`.)
   */
  closeInteraction(interactionId: string, status: 'expired' | 'cancelled', reason: string, fence?: RunFence): Promise<boolean>;
  /** Closes every pending request of a run (it finished or was cancelled). */
  closeRunInteractions(runId: string, reason: string): Promise<string[]>;
  /** Expires pending requests whose `expiresAt` is at or before `now`; returns them. */
  expireDue(now?: Date): Promise<InteractionRecord[]>;
  getInteraction(interactionId: string): Promise<InteractionRecord | undefined>;
  listInteractions(query?: InteractionQuery): Promise<InteractionRecord[]>;
  /** Ids of requests that start with `prefix` exactly (case-sensitive; `%` and `_` are plain characters), in id order, at most `limit`. */
  findInteractionIds(prefix: string, limit: number): Promise<string[]>;
  /** How many requests match (by run, status, the runs' user), counted up to `limit`. */
  countInteractions(query: Pick<InteractionQuery, 'runId' | 'status' | 'userId'> & { limit: number }): Promise<number>;

  // Per-user permissions and the audit log
  listUserPermissions(userId: string): Promise<UserPermissionRecord[]>;
  /** Adds a rule for a user (idempotent: the same rule and behavior is kept once). */
  addUserPermission(record: Omit<UserPermissionRecord, 'createdAt'> & { createdAt?: string }): Promise<void>;
  removeUserPermission(userId: string, rule: string, behavior?: 'allow' | 'deny'): Promise<number>;
  appendAudit(entry: AuditEntry): Promise<void>;
  listAudit(query?: AuditQuery): Promise<AuditEntry[]>;

  // Chat queue (channels): messages waiting for a working run
  /** Commits a message to the end of the session's queue (before the chat is told it is queued). */
  queueChatMessage(sessionKey: string, message: Record<string, unknown>): Promise<QueuedChatMessage>;
  /** Queued messages, oldest first: of one session, or of every session (reserved ones included). */
  listChatQueue(query?: { sessionKey?: string }): Promise<QueuedChatMessage[]>;
  /**
   * Starts a handover: in one transaction, the session's waiting messages are reserved for `token`
   * and returned, oldest first, with any reserved for `token` before (a handover tried again).
   * Messages reserved for another token are left alone. End it with `settleChatQueue`.
   */
  reserveChatQueue(sessionKey: string, token: string): Promise<QueuedChatMessage[]>;
  /**
   * Ends a handover: `delivered` removes the messages reserved for `token`, `released` puts them
   * back in their queue (in their place). Returns how many.
   */
  settleChatQueue(token: string, outcome: 'delivered' | 'released'): Promise<number>;
  /** Removes a session's waiting (unreserved) messages: the chat said /stop or /new. Returns how many. */
  dropChatQueue(sessionKey: string): Promise<number>;

  // Seen inbound ids (channels): what makes a replayed or redelivered chat message count once
  /**
   * Records `id` as seen on `channel` until `expiresAt` (epoch ms). True the first time; false while
   * an earlier record is still live at `now` (default the current time): a replay or a redelivery.
   * One atomic statement, so of two servers (or a restarted one) seeing the same id, one gets true.
   */
  markChannelIdSeen(channel: string, id: string, expiresAt: number, now?: number): Promise<boolean>;
  /** Forgets a seen id, so that a redelivery of it is taken again (its handling failed). */
  forgetChannelId(channel: string, id: string): Promise<void>;
  /** Deletes the seen ids expired at `now` (default the current time); returns how many. */
  pruneChannelSeenIds(now?: number): Promise<number>;

  // Notifications
  /** Calls `fn` for notifications about `runId`, or about every run with `'*'`. */
  subscribe(target: string, fn: (notification: StoreNotification) => void): Promise<Unsubscribe>;
  publish(notification: StoreNotification): Promise<void>;
  /**
   * A number that changes when another connection (another process) committed to the store since
   * the last call, so a poller can skip a query when nothing changed (SQLite: PRAGMA data_version).
   * Undefined when the backend cannot tell cheaply (Postgres): poll anyway.
   */
  dataVersion?(): Promise<number | undefined>;

  // Retention
  /** Deletes finished runs (and everything they own) last updated before `olderThan`. */
  prune(options: { olderThan: Date }): Promise<PruneResult>;

  /** The schema version of the open database. */
  schemaVersion(): Promise<number>;

  // Health
  /** Down or full since the last statement that failed so, or `ok` (no round trip: what was last seen). */
  health?(): StoreHealthReport;
  /** One round trip to the database; rejects with StoreDownError when it does not answer. */
  ping?(): Promise<void>;
  close(): Promise<void>;
}
