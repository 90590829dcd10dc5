// The HTTP server: the API (runs, SSE events, interactions, permissions, audit), auth and the web UI.

// Building and running it
export { createServer, startServer } from './server.js';
export type { ServerOptions, SageServer, StartServerOptions, RunningServer } from './server.js';
export type { RunDriver } from './run-driver.js';

// Auth
export { TokenAuthenticator, parseTokenList, readTokensFile, isLoopbackHost } from './auth.js';
export type { Principal, Role, TokenEntry } from './auth.js';

// The wire contract
export { buildOpenApi } from './openapi.js';
export { startRunBodySchema, runSchema, interactionSchema, permissionsSchema, auditEntrySchema, errorBodySchema } from './schemas.js';
export type { StartRunBody, RunView, InteractionView } from './schemas.js';

// Errors
export { UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, PayloadTooLargeError, ServerConfigError } from './errors.js';
