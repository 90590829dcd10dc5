import { SageError } from '../errors/index.js';

/** No token, or a token the server does not know. */
export class UnauthorizedError extends SageError {
  constructor(message = 'A valid bearer token is required (Authorization: Bearer <token>).') {
    super('unauthorized', message);
  }
}

/** The caller is known but the resource belongs to someone else (or needs an admin). */
export class ForbiddenError extends SageError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** A run, interaction or route that does not exist (or that the caller may not know exists). */
export class NotFoundError extends SageError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/** The request is well formed but conflicts with the resource's state (a finished run, nothing to answer). */
export class ConflictError extends SageError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/** The request body is bigger than the server accepts. */
export class PayloadTooLargeError extends SageError {
  constructor(readonly limitBytes: number) {
    super('payload_too_large', `The request body is larger than ${limitBytes} bytes.`);
  }
}

/** The server was configured in a way it refuses to run with: defined beside the run policies that also throw it. */
export { ServerConfigError } from '../runtime/errors.js';

/** A request refused for where it was addressed to or sent from (auth off: Host and Origin checks). */
export class ForbiddenRequestError extends SageError {
  constructor(code: 'forbidden_host' | 'forbidden_origin', message: string) {
    super(code, message);
  }
}

/** A state-changing request without `Content-Type: application/json` (a cross-site form or text/plain post). */
export class UnsupportedMediaTypeError extends SageError {
  constructor(message: string) {
    super('unsupported_media_type', message);
  }
}

/** Too many runs, pending requests or streams for one user: defined beside the per-user limits that throw it. */
export { TooManyRequestsError } from '../runtime/errors.js';
