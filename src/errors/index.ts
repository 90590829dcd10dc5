export { SageError, InvalidInputError, InvalidTransitionError, ModelError, RunCancelledError } from './sage-error.js';
export { formatZodError, firstZodField } from './format-zod-error.js';
