/**
 * Sage: a runtime for LLM agents in which the human is part of the loop.
 * This is the public API; everything else is internal.
 */

// Running agents
export { run, Run } from './loop/index.js';
export type { RunOptions, RunMode, RunOutcome, RunStatus, RunStats, ToolHistoryEntry, LoopState, LoopHooks, LifecycleState } from './loop/index.js';

// Events
export { runEventSchema, runEventTypes } from './events/index.js';
export type { RunEvent, RunEventType } from './events/index.js';

// Interactions: asking people
export {
  InteractionBroker,
  createInputChannel,
  createAutoResponder,
  interactionRequestSchema,
  interactionResponseSchema,
  validateResponse,
  InteractionError,
  InteractionNotFoundError,
  InteractionAlreadyAnsweredError,
  InteractionExpiredError,
  InteractionCancelledError,
  InvalidResponseError,
} from './interaction/index.js';
export type { InteractionRequest, InteractionResponse, InteractionOutcome, InputChannelHandle, AutoResponse, Question } from './interaction/index.js';

// Tools
export { defineTool, ToolRegistry, askUserQuestionTool } from './tool/index.js';
export type { Tool, ToolContext, ToolResult } from './tool/index.js';

// Models
export { ScriptedModel, loadScriptedModel } from './model/scripted-model.js';
export type { Model, Message, ToolCall, ModelRequest, ModelStreamPart, TokenUsage } from './model/types.js';

// Permissions
export { minimalGate, allowAllGate } from './permission/minimal-gate.js';
export type { PermissionGate, PermissionDecision, GateCall, GateContext, RiskLevel } from './permission/types.js';

// Errors
export { SageError, InvalidInputError, InvalidTransitionError, ModelError } from './errors/index.js';
