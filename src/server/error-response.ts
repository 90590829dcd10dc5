import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { SageError } from '../errors/index.js';

/** The one error shape every route answers with. */
export interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

/** HTTP status by stable error code; codes not listed are 400 (a SageError) or 500 (anything else). */
const STATUS_BY_CODE: Record<string, ContentfulStatusCode> = {
  unauthorized: 401,
  forbidden: 403,
  policy_forbidden: 403,
  forbidden_host: 403,
  forbidden_origin: 403,
  run_not_found: 404,
  interaction_not_found: 404,
  route_not_found: 404,
  not_waiting: 404,
  tool_call_not_found: 404,
  rule_not_found: 404,
  run_not_live: 409,
  interaction_already_answered: 409,
  run_finished: 409,
  run_busy: 409,
  nothing_to_answer: 409,
  not_idle: 409,
  folder_not_trusted: 409,
  project_rules_off: 409,
  interaction_expired: 410,
  interaction_cancelled: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_runs: 429,
  too_many_pending_interactions: 429,
  too_many_streams: 429,
  invalid_input: 400,
  invalid_json: 400,
  invalid_response: 400,
  store_unavailable: 503,
  disk_full: 503,
  shutting_down: 503,
  // Internal failures: the message is still written for people, but the client did nothing wrong.
  lease_lost: 500,
  event_seq_conflict: 500,
  checkpoint_format: 500,
  store_version_newer: 500,
  internal_error: 500,
};

export function statusOf(error: unknown): ContentfulStatusCode {
  if (!SageError.isInstance(error)) return 500;
  return STATUS_BY_CODE[error.code] ?? 400;
}

/** Turns any thrown value into `{ error }`; never leaks a stack trace or an internal message. */
export function errorBody(error: unknown): ErrorBody {
  if (!SageError.isInstance(error)) return { error: { code: 'internal_error', message: 'The server failed to handle this request; it was logged.' } };
  const field = (error as { field?: unknown }).field;
  return { error: { code: error.code, message: clip(error.message), ...(typeof field === 'string' ? { field: clip(field) } : {}) } };
}

/**
 * Messages quote ids and names ("No run with id …"); a quoted value longer than an id can be is
 * cut, so an error never echoes a client's megabyte back (routes also refuse such ids first).
 */
function clip(text: string): string {
  const quoted = text.replace(/"([^"]{129,})"/g, (_, inner: string) => `"${inner.slice(0, 32)}…"`);
  return quoted.length > 2_000 ? `${quoted.slice(0, 2_000)}…` : quoted;
}

export function sendError(c: Context, error: unknown): Response {
  const status = statusOf(error);
  // RFC 6750: a 401 names the scheme, and says when the token given was the problem.
  if (status === 401) c.header('WWW-Authenticate', c.req.header('authorization') ? 'Bearer realm="sage", error="invalid_token"' : 'Bearer realm="sage"');
  // The store is down or full: the client may ask again, and is told when (RFC 9110 Retry-After).
  if (status === 503) c.header('Retry-After', String(retryAfterOf(error)));
  return c.json(errorBody(error), status);
}

/** Seconds a client should wait before asking again after a 503: what the error says, else 5. */
function retryAfterOf(error: unknown): number {
  const seconds = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : 5;
}
