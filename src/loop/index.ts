// The agent loop: run a task, watch its events, get its outcome.
export { run, Run } from './run.js';
export type { RunOptions, RunMode, LoopHooks } from './options.js';
export type { RunOutcome, RunStatus, RunStats, ToolHistoryEntry } from './outcome.js';
export { Lifecycle, canTransition } from './lifecycle.js';
export type { LifecycleState, ExecutionPhase, CompletionReason, StateTransition } from './lifecycle.js';
export { LOOP_STATE_VERSION } from './loop-state.js';
export type { LoopState } from './loop-state.js';
export { modelTexts } from './model-texts.js';
