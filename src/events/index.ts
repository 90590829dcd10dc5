// Run events: the one stream every front end (CLI, SSE, store, web) reads.
export { runEventSchema, runEventDataSchemas, runEventTypes, agentRefSchema } from './run-event.js';
export type { RunEvent, RunEventOf, RunEventType, RunEventData, AgentRef } from './run-event.js';
