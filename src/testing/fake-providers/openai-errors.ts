import { bearerToken } from './reply-helpers.js';
import type { WireFormat } from './types.js';

/** OpenAI's error `type` and `code` per HTTP status, as its API answers. */
const ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
};

/** The error body shared by OpenAI's endpoints (and mirrored by compatible servers). */
export function openaiErrorBody(status: number, message: string | undefined): unknown {
  const known = ERRORS[status] ?? (status >= 500 ? ERRORS[500]! : ERRORS[400]!);
  return { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } };
}

export function openaiIsAuthorized(headers: Parameters<WireFormat['isAuthorized']>[0], apiKey: string): boolean {
  return bearerToken(headers.authorization) === apiKey;
}
