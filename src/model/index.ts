// Models: the contract the loop calls, the adapters behind it, and how they recover from failure.

// The contract
export type { Model, ModelRequest, ModelStreamPart, Message, ToolCall, ToolSpec, TokenUsage, FinishReason, ToolImage } from './types.js';

// Choosing a model
export { resolveModel, resolveParsedModel, parseModelSpec, MODEL_PROVIDERS } from './resolve-model.js';
export type { ResolveModelOptions, ModelProvider, ModelSpec } from './resolve-model.js';
export { readScriptFile, ScriptFileError, MAX_SCRIPT_BYTES } from './script-file.js';
export { defaultContextWindow } from './context-windows.js';

// Adapters
export { createAiSdkModel } from './ai-sdk/ai-sdk-model.js';
export type { AiSdkModelOptions } from './ai-sdk/ai-sdk-model.js';
export type { ToolResultImages } from './ai-sdk/to-provider-prompt.js';
export { MODEL_IMAGE_MEDIA_TYPES, toolImageSchema, checkToolImages } from './tool-image.js';
export { loadScriptedModel, ScriptedModel, ScriptFormatError } from './scripted-model.js';

// Recovery
export { withRecovery } from './recovery/with-recovery.js';
export type { RecoveryOptions, RetryInfo } from './recovery/with-recovery.js';
export { CircuitBreaker } from './recovery/circuit-breaker.js';
export type { CircuitBreakerOptions, CircuitState } from './recovery/circuit-breaker.js';
export { RateLimiter } from './recovery/rate-limiter.js';
export type { RateLimiterOptions } from './recovery/rate-limiter.js';
export { backoffDelay } from './recovery/backoff.js';
export { systemClock } from './recovery/clock.js';
export type { Clock } from './recovery/clock.js';

// Errors
export {
  ModelCallError,
  ModelAuthenticationError,
  ModelRateLimitError,
  ModelUnavailableError,
  ModelRequestRejectedError,
  ModelStreamInterruptedError,
  ModelTimeoutError,
  ModelCircuitOpenError,
  ModelRetriesExhaustedError,
  MissingApiKeyError,
  InvalidModelSpecError,
  isRetryableModelError,
} from './errors.js';
