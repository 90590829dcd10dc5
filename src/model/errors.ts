import { ModelError, SageError } from '../errors/index.js';

/**
 * The ways a model call fails. Each carries `retryable`, which the recovery wrapper reads, and the
 * data a caller needs to explain the failure (the status, the key variable, the delay asked for).
 */

interface ModelFailureOptions {
  provider: string;
  status?: number;
  cause?: unknown;
}

/** Base of the failures a provider call can end with; `retryable` says whether another attempt may succeed. */
export class ModelCallError extends ModelError {
  readonly provider: string;
  readonly status?: number;
  constructor(
    code: string,
    message: string,
    readonly retryable: boolean,
    options: ModelFailureOptions,
  ) {
    super(message, { code, cause: options.cause });
    this.provider = options.provider;
    this.status = options.status;
  }
}

/** 401/403: the key is missing, wrong or lacks access. Never retried: the same key fails the same way. */
export class ModelAuthenticationError extends ModelCallError {
  constructor(
    readonly keyVariable: string | undefined,
    detail: string,
    options: ModelFailureOptions,
  ) {
    const fix = keyVariable ? ` Check ${keyVariable}.` : '';
    super('model_auth_failed', `${options.provider} refused the request (HTTP ${options.status ?? '?'}): ${detail}.${fix}`, false, options);
  }
}

/** 429: the provider asks us to slow down, possibly saying for how long. */
export class ModelRateLimitError extends ModelCallError {
  constructor(
    readonly retryAfterMs: number | undefined,
    detail: string,
    options: ModelFailureOptions,
  ) {
    const wait = retryAfterMs !== undefined ? ` (retry after ${Math.ceil(retryAfterMs / 1000)} s)` : '';
    super('model_rate_limited', `${options.provider} is rate limiting requests${wait}: ${detail}`, true, options);
  }
}

/** 5xx, 408, 529 or no answer at all: the provider is down, overloaded or unreachable. */
export class ModelUnavailableError extends ModelCallError {
  /** Set when the provider said when to come back (503 with retry-after). */
  readonly retryAfterMs?: number;
  constructor(detail: string, options: ModelFailureOptions & { retryAfterMs?: number }) {
    const what = options.status !== undefined ? `answered HTTP ${options.status}` : 'could not be reached';
    super('model_unavailable', `${options.provider} ${what}: ${detail}`, true, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Any other 4xx: the request itself is wrong (bad model name, context too long); retrying repeats the mistake. */
export class ModelRequestRejectedError extends ModelCallError {
  constructor(detail: string, options: ModelFailureOptions) {
    super('model_request_rejected', `${options.provider} rejected the request (HTTP ${options.status ?? '?'}): ${detail}`, false, options);
  }
}

/**
 * The response stream broke before the provider said it was complete. Retryable only when nothing
 * had been delivered to the consumer yet: once text reached a person, a silent retry would show it twice.
 */
export class ModelStreamInterruptedError extends ModelCallError {
  constructor(
    readonly deliveredOutput: boolean,
    detail: string,
    options: ModelFailureOptions,
  ) {
    const after = deliveredOutput ? 'after part of the reply was streamed; the partial reply was discarded' : 'before any output';
    super('model_stream_interrupted', `The ${options.provider} response stream was cut ${after}: ${detail}`, !deliveredOutput, options);
  }
}

/** No part arrived within the idle timeout; the request was aborted. */
export class ModelTimeoutError extends ModelCallError {
  constructor(
    readonly timeoutMs: number,
    readonly deliveredOutput: boolean,
    options: ModelFailureOptions,
  ) {
    super('model_timeout', `${options.provider} sent nothing for ${Math.round(timeoutMs / 1000)} s; the request was aborted.`, !deliveredOutput, options);
  }
}

/** The circuit breaker is open: recent calls kept failing, so this one fails fast until the cool-down ends. */
export class ModelCircuitOpenError extends ModelError {
  readonly retryable = false;
  constructor(
    readonly provider: string,
    readonly retryInMs: number,
    options?: { cause?: unknown },
  ) {
    const when = retryInMs > 0 ? `calls are paused for ${Math.ceil(retryInMs / 1000)} s before trying again` : 'one trial call is checking whether it recovered';
    super(`${provider} failed repeatedly; ${when} (circuit breaker open).`, { code: 'model_circuit_open', cause: options?.cause });
  }
}

/** Every attempt failed with a retryable error; `cause` is the last one. */
export class ModelRetriesExhaustedError extends ModelError {
  readonly retryable = false;
  constructor(
    readonly attempts: number,
    readonly lastError: unknown,
  ) {
    const last = lastError instanceof Error ? lastError.message : String(lastError);
    super(`The model call failed after ${attempts} attempt(s). Last error: ${last}`, { code: 'model_retries_exhausted', cause: lastError });
  }
}

/** A provider was chosen whose API key is not set. */
export class MissingApiKeyError extends ModelError {
  constructor(
    readonly provider: string,
    readonly keyVariable: string,
  ) {
    super(
      `No API key for ${provider}: set ${keyVariable} in the environment. To try Sage without a key, \`sage demo\` runs offline with a scripted model.`,
      { code: 'model_api_key_missing' },
    );
  }
}

/** A `--model` value that cannot be resolved: unknown provider, missing name, missing base URL. */
export class InvalidModelSpecError extends ModelError {
  constructor(
    readonly spec: string,
    detail: string,
  ) {
    super(`Cannot use the model "${spec}": ${detail}`, { code: 'model_spec_invalid' });
  }
}

/** True for errors that another attempt of the same request may cure. */
export function isRetryableModelError(error: unknown): boolean {
  return SageError.isInstance(error) && (error as { retryable?: unknown }).retryable === true;
}
