// The durable store: the contract and its SQLite and Postgres backends.

// Contract
export { STORE_SPECIFICATION_VERSION, CHECKPOINT_FORMAT, FINISHED_STATUSES, RUN_STATUSES } from './types.js';
export { isNextMessageRequest, waitingFor, type WaitingFor } from './run-status.js';
export { committedEvents, continuesFrom } from './committed-events.js';
export { JsonText } from './json-text.js';
export type {
  Store,
  RunRecord,
  NewRun,
  RunQuery,
  StoredRunStatus,
  Checkpoint,
  LoadedCheckpoint,
  RunResumeState,
  ToolCallRecord,
  InteractionRecord,
  InteractionQuery,
  InteractionStatus,
  RunWrite,
  RunFence,
  ClaimAnswerOptions,
  StepWrite,
  UserPermissionRecord,
  AuditEntry,
  AuditQuery,
  StoreNotification,
  Unsubscribe,
  PruneResult,
  QueuedChatMessage,
  RunOwnerRecord,
} from './types.js';

// Errors
export { storeFault, StoreHealth, type StoreHealthReport } from './store-faults.js';
export { StoreDownError, StoreFullError, isStoreFault, StoreVersionError, StoreUnavailableError, LeaseLostError, RunNotFoundError, EventSeqConflictError, CheckpointFormatError, RunBusyError, StoreUrlError } from './errors.js';
