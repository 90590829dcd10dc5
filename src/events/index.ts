// Run events: the one stream every front end (CLI, SSE, store, web) reads.
export { runEventSchema, runEventDataSchemas, runEventTypes } from './run-event.js';
export type { RunEvent, RunEventOf, RunEventType, RunEventData } from './run-event.js';
