import { createRequire } from 'node:module';
import type * as AiPackage from 'ai';
import { SageError } from '../../errors/index.js';
import {
  ModelAuthenticationError,
  ModelRateLimitError,
  ModelRequestRejectedError,
  ModelStreamInterruptedError,
  ModelUnavailableError,
} from '../errors.js';
import { parseRetryAfter } from './retry-after.js';

export interface ErrorContext {
  /** Display name of the provider, e.g. `Anthropic`. */
  provider: string;
  /** The environment variable that holds the key, named in authentication errors. */
  keyVariable?: string;
  /** Whether any part already reached the consumer (decides whether a stream cut is retryable). */
  deliveredOutput: boolean;
}

/**
 * The `ai` package (and the gateway it brings) is needed here only for its APICallError: loaded at
 * the first error to classify rather than in every process that can resolve a model, since it costs
 * memory in every one (figures in bench/README.md).
 */
const loadPackage = createRequire(import.meta.url);
let apiCallError: typeof AiPackage.APICallError | undefined;

/** Anthropic's error `type`s (HTTP bodies and mid-stream `error` events) → an HTTP status. */
const ANTHROPIC_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/**
 * Turns whatever a provider package threw or streamed as an `error` part into one of our typed
 * model errors, so recovery and the CLI switch on a stable code instead of provider specifics.
 */
export function classifyProviderError(error: unknown, context: ErrorContext): SageError {
  if (SageError.isInstance(error)) return error;
  const base = { provider: context.provider, cause: error };

  apiCallError ??= (loadPackage('ai') as typeof AiPackage).APICallError;
  if (apiCallError.isInstance(error)) {
    if (error.statusCode === undefined) {
      // No HTTP answer: connection refused, DNS failure, socket reset before the headers.
      return new ModelUnavailableError(error.message, base);
    }
    if (error.statusCode < 300) {
      // The provider package wraps a body that broke while being read ("Failed to process
      // successful response", caused by undici's "terminated") with the response's 200.
      return new ModelStreamInterruptedError(context.deliveredOutput, describeChain(error), base);
    }
    return fromStatus(error.statusCode, error.message, parseRetryAfter(error.responseHeaders), error.isRetryable, context, base);
  }

  // Error parts inside a stream: Anthropic sends `{ type, message }`, the OpenAI package builds
  // `{ message, type, code, statusCode, isRetryable }`.
  if (typeof error === 'object' && error !== null && !(error instanceof Error)) {
    const record = error as Record<string, unknown>;
    const message = typeof record.message === 'string' ? record.message : JSON.stringify(error);
    const status =
      typeof record.statusCode === 'number'
        ? record.statusCode
        : typeof record.type === 'string'
          ? ANTHROPIC_ERROR_STATUS[record.type]
          : undefined;
    if (status !== undefined) {
      const retryable = typeof record.isRetryable === 'boolean' ? record.isRetryable : status === 429 || status >= 500;
      return fromStatus(status, message, undefined, retryable, context, base);
    }
    return new ModelStreamInterruptedError(context.deliveredOutput, message, base);
  }

  // Anything else while streaming (undici's "terminated", a malformed chunk) means the stream broke.
  const message = error instanceof Error ? describeChain(error) : String(error);
  return new ModelStreamInterruptedError(context.deliveredOutput, message, base);
}

function fromStatus(
  status: number,
  message: string,
  retryAfterMs: number | undefined,
  retryable: boolean,
  context: ErrorContext,
  base: { provider: string; cause: unknown },
): SageError {
  const options = { ...base, status };
  if (status === 401 || status === 403) return new ModelAuthenticationError(context.keyVariable, message, options);
  if (status === 429) return new ModelRateLimitError(retryAfterMs, message, options);
  if (status >= 500 || status === 408 || retryable) return new ModelUnavailableError(message, { ...options, retryAfterMs });
  return new ModelRequestRejectedError(message, options);
}

/** The useful part hides in `cause` ("Failed to process…" ← "terminated" ← "other side closed"). */
function describeChain(error: Error): string {
  const messages: string[] = [];
  for (let current: unknown = error; current instanceof Error && messages.length < 4; current = current.cause) messages.push(current.message);
  return messages.join(': ');
}
