import { z } from 'zod';
import {
  auditEntrySchema,
  auditQuerySchema,
  cancelBodySchema,
  closeBodySchema,
  errorBodySchema,
  healthSchema,
  readySchema,
  interactionResponseSchema,
  interactionSchema,
  interactionsQuerySchema,
  meSchema,
  modelsSchema,
  rootsSchema,
  userEventSchema,
  messageBodySchema,
  permissionsSchema,
  ruleBodySchema,
  runEventSchema,
  runSchema,
  runsQuerySchema,
  startRunBodySchema,
  suspendedSchema,
} from './schemas.js';

type Json = Record<string, unknown>;

interface Operation {
  summary: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** Status → schema (undefined: no body). `sse` marks a text/event-stream alternative. */
  ok: { status: number; schema?: z.ZodType; sse?: boolean | { schema: z.ZodType; description: string }; text?: boolean };
  errors: number[];
  public?: boolean;
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request (the error names the field)',
  401: 'Missing or unknown bearer token',
  403: "Someone else's resource, or more than the server policy allows (code policy_forbidden)",
  404: 'Not found',
  409: 'Conflicts with the current state (already answered: says by whom and when)',
  410: 'Expired or cancelled',
  413: 'Body too large',
  415: 'Not sent as Content-Type: application/json (required on every POST and DELETE, even with an empty body)',
  429: 'A per-user limit is reached (runs in flight, pending interactions, open event streams)',
  503: 'Shutting down',
};

const idParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

const OPERATIONS: Record<string, Record<string, Operation & { params?: string[] }>> = {
  '/runs': {
    post: { summary: 'Start a run (Accept: text/event-stream streams its events)', body: startRunBodySchema, ok: { status: 201, schema: runSchema, sse: true }, errors: [400, 401, 403, 413, 503] },
    get: { summary: 'List runs (a user sees their own, an admin all)', query: runsQuerySchema, ok: { status: 200, schema: z.object({ runs: z.array(runSchema) }) }, errors: [400, 401, 403] },
  },
  '/runs/{id}': { get: { summary: 'One run', params: ['id'], ok: { status: 200, schema: runSchema }, errors: [401, 403, 404] } },
  '/runs/{id}/events': {
    get: { summary: "The run's events as SSE: replays after Last-Event-ID, then live", params: ['id'], ok: { status: 200, schema: runEventSchema, sse: true }, errors: [400, 401, 403, 404] },
  },
  '/runs/{id}/rules': {
    get: {
      summary: 'The rules the run\'s gate added during the run ("always, this run" answers), as the store records them, and the project rules of its folder',
      params: ['id'],
      ok: {
        status: 200,
        schema: z.object({
          runId: z.string(),
          session: z.array(z.object({ rule: z.string(), toolName: z.string().nullable(), interactionId: z.string(), answeredBy: z.string().nullable(), answeredAt: z.string().nullable() })),
          project: z.object({ cwd: z.string(), file: z.string(), trusted: z.boolean(), allow: z.array(z.string()), canSave: z.boolean(), why: z.string().optional() }).optional(),
        }),
      },
      errors: [401, 403, 404],
    },
  },
  '/runs/{id}/tool-calls/{toolCallId}/output': {
    get: {
      summary: "A tool call's whole output as text/plain (download=1: as an attachment); the whole text when the model's copy was cut",
      params: ['id', 'toolCallId'],
      ok: { status: 200, text: true },
      errors: [400, 401, 403, 404],
    },
  },
  '/runs/{id}/messages': {
    post: { summary: 'The next user message of an interactive run', params: ['id'], body: messageBodySchema, ok: { status: 202, schema: z.object({ interaction: interactionSchema }), sse: true }, errors: [400, 401, 403, 404, 409] },
  },
  '/runs/{id}/close': {
    post: {
      summary:
        'End an idle run (status idle, waitingFor message) as completed: its next-message ask is answered with nothing. 200 with the completed run; 202 while it is still closing (follow GET /runs/{id}); 409 not_idle when it is working or waits for an approval or a question',
      params: ['id'],
      body: closeBodySchema,
      ok: { status: 200, schema: runSchema },
      errors: [400, 401, 403, 404, 409],
    },
  },
  '/runs/{id}/cancel': { post: { summary: 'Cancel a run', params: ['id'], body: cancelBodySchema, ok: { status: 200, schema: runSchema }, errors: [400, 401, 403, 404, 409] } },
  '/runs/{id}/suspended': { get: { summary: 'The interaction a run waits for', params: ['id'], ok: { status: 200, schema: suspendedSchema }, errors: [401, 403, 404] } },
  '/interactions': {
    get: { summary: 'Interactions (e.g. ?status=pending: the inbox)', query: interactionsQuerySchema, ok: { status: 200, schema: z.object({ interactions: z.array(interactionSchema) }) }, errors: [400, 401, 403] },
  },
  '/interactions/{id}': { get: { summary: 'One interaction', params: ['id'], ok: { status: 200, schema: interactionSchema }, errors: [401, 403, 404] } },
  '/interactions/{id}/respond': {
    post: {
      summary: 'Answer an interaction; the first valid answer wins and resumes the run (Accept: text/event-stream streams the continuation)',
      params: ['id'],
      body: interactionResponseSchema,
      ok: { status: 200, schema: interactionSchema, sse: true },
      errors: [400, 401, 403, 404, 409, 410, 413],
    },
  },
  '/permissions/{userId}': { get: { summary: "A user's allow and deny patterns", params: ['userId'], ok: { status: 200, schema: permissionsSchema }, errors: [401, 403] } },
  '/permissions/{userId}/allow': { post: { summary: 'Add an allow pattern', params: ['userId'], body: ruleBodySchema, ok: { status: 201, schema: permissionsSchema }, errors: [400, 401, 403] } },
  '/permissions/{userId}/deny': { post: { summary: 'Add a deny pattern', params: ['userId'], body: ruleBodySchema, ok: { status: 201, schema: permissionsSchema }, errors: [400, 401, 403] } },
  '/permissions/{userId}/{kind}/{rule}': {
    delete: { summary: 'Remove a pattern (kind: allow | deny; rule URL-encoded)', params: ['userId', 'kind', 'rule'], ok: { status: 200, schema: permissionsSchema }, errors: [400, 401, 403, 404] },
  },
  '/audit': { get: { summary: 'Permission decisions and answers, oldest first (page with since=)', query: auditQuerySchema, ok: { status: 200, schema: z.object({ entries: z.array(auditEntrySchema) }) }, errors: [400, 401, 403, 404] } },
  '/me': { get: { summary: 'Who the token belongs to, with the permission modes and roots a client may pick', ok: { status: 200, schema: meSchema }, errors: [401] } },
  '/models': { get: { summary: 'The default model and the scripted model files a run may name', ok: { status: 200, schema: modelsSchema }, errors: [401] } },
  '/roots': { get: { summary: "The working directories a run's cwd may be in", ok: { status: 200, schema: rootsSchema }, errors: [401] } },
  '/events': {
    get: {
      summary: "The caller's run status and interaction changes (an admin: everyone's), live; send Accept: text/event-stream",
      ok: { status: 200, sse: { schema: userEventSchema, description: 'event: type, data: the change as JSON; no ids, no replay: reload lists after a reconnect' } },
      errors: [400, 401],
    },
  },
  '/healthz': { get: { summary: 'Liveness: the process answers (503 only while shutting down); storeStatus says how the store was last seen', ok: { status: 200, schema: healthSchema }, errors: [503], public: true } },
  '/readyz': { get: { summary: 'Readiness: the store answers now and has room to write; 503 store_unavailable or disk_full (with Retry-After) otherwise', ok: { status: 200, schema: readySchema }, errors: [503], public: true } },
};

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  // `unrepresentable: 'any'` keeps z.unknown()/transforms from throwing; they document as open values.
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' }) as Json;
}

function queryParams(schema: z.ZodObject): Json[] {
  return Object.entries(schema.shape).map(([name, field]) => ({ name, in: 'query', required: false, schema: { type: name === 'limit' ? 'integer' : 'string' }, description: (field as z.ZodType).description }));
}

/** The OpenAPI 3 document, built from the same zod schemas the routes validate with. */
export function buildOpenApi(version: string): Json {
  const paths: Json = {};
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    const item: Json = {};
    for (const [method, op] of Object.entries(methods)) {
      const responses: Json = {};
      const content: Json = {};
      if (op.ok.schema) content['application/json'] = { schema: schemaOf(op.ok.schema, 'output') };
      if (op.ok.text) content['text/plain'] = { schema: { type: 'string' } };
      if (op.ok.sse === true) content['text/event-stream'] = { schema: schemaOf(runEventSchema, 'output'), description: 'id: seq, event: type, data: the RunEvent as JSON' };
      else if (op.ok.sse) content['text/event-stream'] = { schema: schemaOf(op.ok.sse.schema, 'output'), description: op.ok.sse.description };
      responses[String(op.ok.status)] = { description: op.summary, content };
      // Every state-changing route needs the JSON content type; every streaming one counts against the user's limits.
      const errors = [...op.errors, ...(method === 'get' ? [] : [415]), ...(op.ok.sse ? [429] : [])];
      for (const status of errors) responses[String(status)] = { description: ERROR_TEXT[status], content: { 'application/json': { schema: schemaOf(errorBodySchema, 'output') } } };
      item[method] = {
        summary: op.summary,
        ...(op.public ? { security: [] } : {}),
        parameters: [...(op.params ?? []).map(idParam), ...(op.query ? queryParams(op.query) : [])],
        ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(op.body, 'input') } } } } : {}),
        responses,
      };
    }
    paths[path] = item;
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Sage API', version, description: 'Runs, live events (SSE), interactions, per-user permissions and the audit log.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
