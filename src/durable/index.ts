// Durable runs: start, suspend, resume, answer and recover runs through the store.

// The runner
export { DurableRunner, maxWaitingInMemorySchema } from './durable-runner.js';
export type { DurableRunnerOptions, StartOptions, DurableRunHandle, DurableOutcome, RespondResult, Delivery, RecoverResult } from './durable-runner.js';
export type { DurableRuntime, LoopExtras } from './runtime.js';
export { storedRunOptionsSchema, parseStoredOptions } from './stored-options.js';
export type { StoredRunOptions, StoredRunOptionsInput } from './stored-options.js';

// A gate's audit rows, committed with the writes of the run it decides for
export { stageRunAudit } from './audit-routing.js';

// Lease owners' processes: a dead owner on this host is known at once
export { deadOwners } from './dead-owners.js';
export { ownerLiveness, thisProcess, type OwnerLiveness, type OwnerProcess } from './owner-process.js';

// Errors
export { RunFinishedError, RunLeftError, RunRebuildError } from './errors.js';

// One-call helpers (the CLI and the server)
export { startDurableRun, resumeRun, respond, recover, runnerFor } from './functions.js';
export type { RunnerSettings } from './functions.js';
