import { SageError } from '../errors/index.js';

/** Base of the errors a response can be refused with. */
export class InteractionError extends SageError {
  constructor(
    code: string,
    message: string,
    readonly interactionId: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

export class InteractionNotFoundError extends InteractionError {
  constructor(interactionId: string) {
    super('interaction_not_found', `No interaction with id "${interactionId}" is known.`, interactionId);
  }
}

export class InteractionAlreadyAnsweredError extends InteractionError {
  constructor(
    interactionId: string,
    readonly answeredBy: string | undefined,
    readonly answeredAt: string | undefined,
  ) {
    super(
      'interaction_already_answered',
      `Interaction "${interactionId}" was already answered${answeredBy ? ` by ${answeredBy}` : ''}${answeredAt ? ` at ${answeredAt}` : ''}.`,
      interactionId,
    );
  }
}

export class InteractionExpiredError extends InteractionError {
  constructor(interactionId: string, readonly expiredAt?: string) {
    super('interaction_expired', `Interaction "${interactionId}" expired${expiredAt ? ` at ${expiredAt}` : ''}; it can no longer be answered.`, interactionId);
  }
}

export class InteractionCancelledError extends InteractionError {
  constructor(interactionId: string, readonly reason: string) {
    super('interaction_cancelled', `Interaction "${interactionId}" was cancelled (${reason}); it can no longer be answered.`, interactionId);
  }
}

/** The response does not fit its request (wrong kind, missing or unknown values). */
export class InvalidResponseError extends InteractionError {
  constructor(interactionId: string, message: string, readonly field?: string) {
    super('invalid_response', message, interactionId);
  }
}
