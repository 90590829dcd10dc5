const marker = Symbol.for('sage-agent.error');

/**
 * Base class of every error Sage throws on purpose. Each subclass has a stable `code`
 * that callers (the CLI, the HTTP server, tests) switch on; messages are for people.
 */
export class SageError extends Error {
  /** The class names from this error's own class up to SageError, so each class can recognise its instances. */
  readonly [marker]: readonly string[];
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    const kinds: string[] = [];
    for (let kind: unknown = new.target; typeof kind === 'function' && kind !== Error; kind = Object.getPrototypeOf(kind)) kinds.push((kind as { name: string }).name);
    this[marker] = kinds;
  }

  /**
   * Works across duplicate copies of the package, unlike `instanceof`, and per class:
   * `InteractionAlreadyAnsweredError.isInstance(e)` is true only for that error (or a subclass of
   * it), `SageError.isInstance(e)` for any Sage error. Classes are told apart by name.
   */
  static isInstance<T extends SageError>(this: abstract new (...args: never[]) => T, error: unknown): error is T {
    if (typeof error !== 'object' || error === null) return false;
    const kinds = (error as Record<symbol, unknown>)[marker];
    return Array.isArray(kinds) && kinds.includes(this.name);
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
