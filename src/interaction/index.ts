// Interactions: what a run asks a person, how the answer is validated, and who delivers it.

// Contracts
export { interactionRequestSchema, questionSchema, permissionSuggestionSchema } from './request.js';
export type {
  InteractionRequest,
  InteractionRequestOf,
  InteractionKind,
  InteractionDraft,
  CombinedItem,
  Question,
  PermissionSuggestion,
} from './request.js';
export { interactionResponseSchema, rememberSchema } from './response.js';
export type { InteractionResponse, InteractionResponseInput, ItemResponse, Remember } from './response.js';
export { validateResponse } from './validate-response.js';
export { reasonLine } from './reason-line.js';

// The broker and its backends
export { InteractionBroker } from './broker.js';
export type { InteractionOutcome, InteractionResponder, InteractionPersistence, PriorOutcome, BrokerEvent, OpenOptions, BrokerOptions, StopSource } from './broker.js';
export { InputChannel, createInputChannel } from './input-channel.js';
export type { InputChannelHandle } from './input-channel.js';
export { createAutoResponder, defaultAnswer, batchResponder } from './auto-responder.js';
export type { AutoResponse, AutoResponseFn } from './auto-responder.js';

// Errors
export {
  InteractionError,
  InteractionNotFoundError,
  InteractionAlreadyAnsweredError,
  InteractionExpiredError,
  InteractionCancelledError,
  InvalidResponseError,
} from './errors.js';
