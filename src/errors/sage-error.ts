const marker = Symbol.for('sage-agent.error');

/**
 * Base class of every error Sage throws on purpose. Each subclass has a stable `code`
 * that callers (the CLI, the HTTP server, tests) switch on; messages are for people.
 */
export class SageError extends Error {
  readonly [marker] = true;
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }

  /** Works across duplicate copies of the package, unlike `instanceof`. */
  static isInstance(error: unknown): error is SageError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

/** Input from outside (flags, files, HTTP bodies) that does not validate. */
export class InvalidInputError extends SageError {
  readonly field?: string;
  constructor(message: string, options?: { field?: string; cause?: unknown }) {
    super('invalid_input', message, options);
    this.field = options?.field;
  }
}

/** A lifecycle transition that the state machine does not allow. */
export class InvalidTransitionError extends SageError {
  constructor(readonly from: string, readonly to: string) {
    super('invalid_transition', `Invalid lifecycle transition from ${from} to ${to}.`);
  }
}

/** The model failed, or produced something the run cannot continue from. */
export class ModelError extends SageError {
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(options?.code ?? 'model_error', message, options);
  }
}

/** A run was cancelled through its AbortSignal or `cancel()`. */
export class RunCancelledError extends SageError {
  constructor(readonly reason = 'The run was cancelled.') {
    super('run_cancelled', reason);
  }
}
