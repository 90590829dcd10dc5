import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { InvalidInputError } from '../errors/index.js';
import type { AppDeps, AppEnv } from './app-env.js';
import { LOCAL_PRINCIPAL, loopbackRequestProblem, type TokenAuthenticator } from './auth.js';
import { sendError, statusOf } from './error-response.js';
import { limitBody } from './body-limit.js';
import { ForbiddenRequestError, NotFoundError, UnsupportedMediaTypeError } from './errors.js';
import { badText, MAX_ID_LENGTH } from './json-limits.js';
import { isJsonContentType } from './read-body.js';
import { wantsEventStream } from './sse.js';
import { StreamSlots } from '../runtime/user-limits.js';
import { buildOpenApi } from './openapi.js';
import { auditRoutes } from './routes/audit.js';
import { offerRoutes } from './routes/offer.js';
import { userEventRoutes } from './routes/user-events.js';
import { serverOffer } from './server-offer.js';
import { interactionRoutes } from './routes/interactions.js';
import { permissionRoutes } from './routes/permissions.js';
import { runRoutes } from './routes/runs.js';
import { serveWebFile } from './static-files.js';
import { ReadinessProbe, ShuttingDownError, storeState } from './readiness.js';

export interface AppOptions extends AppDeps {
  /** undefined: no auth (the server has checked it is bound to loopback). */
  authenticator: TokenAuthenticator | undefined;
  /** Largest request body accepted, bytes. */
  maxBodyBytes: number;
  webRoot: string | undefined;
  version: string;
  /** The port the server listens on, once known: with auth off, requests must name it in Host. */
  listeningPort?: () => number | undefined;
}

/** Paths answered without a token: health checks, the API description and the web UI's files. */
const PUBLIC_API = new Set(['/healthz', '/readyz', '/openapi.json']);
const API_PREFIXES = ['/runs', '/interactions', '/permissions', '/audit', '/me', '/models', '/roots', '/events'];
/** Resources whose second path segment is an id (run, interaction) or a user id. */
const ID_RESOURCES = new Set(['runs', 'interactions', 'permissions']);
/** Query parameters that name a run or a user. */
const ID_QUERY = new Set(['runId', 'userId']);
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Refuses what no route should ever see in a path or a query: text that is not percent-decodable,
 * NUL or other control characters, lone surrogates, and ids longer than any id the server makes
 * (checked here, before a lookup, so no error quotes them back).
 */
function checkPathAndQuery(path: string, rawQuery: string, query: Record<string, string[]>): void {
  const segments = path.split('/').slice(1);
  const decoded = segments.map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new InvalidInputError('The request path is not valid percent-encoding.', { field: 'path' });
    }
  });
  for (const segment of decoded) {
    // eslint-disable-next-line no-control-regex
    if (badText(segment) || /[\u0000-\u001f\u007f]/.test(segment)) throw new InvalidInputError('The request path contains a control character or malformed Unicode.', { field: 'path' });
  }
  if (ID_RESOURCES.has(decoded[0] ?? '') && (decoded[1]?.length ?? 0) > MAX_ID_LENGTH) {
    throw new InvalidInputError(`The id in the path is longer than ${MAX_ID_LENGTH} characters.`, { field: decoded[0] === 'permissions' ? 'userId' : 'id' });
  }
  const search = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;
  for (const pair of search ? search.split('&') : []) {
    try {
      decodeURIComponent(pair.replace(/\+/g, ' '));
    } catch {
      throw new InvalidInputError('The query string is not valid percent-encoding.', { field: 'query' });
    }
  }
  for (const [name, values] of Object.entries(query)) {
    if (ID_QUERY.has(name) && values.some((v) => v.length > MAX_ID_LENGTH)) throw new InvalidInputError(`The ${name} is longer than ${MAX_ID_LENGTH} characters.`, { field: name });
    for (const value of [name, ...values]) {
      // eslint-disable-next-line no-control-regex
      if (badText(value) || /[\u0000-\u001f\u007f]/.test(value)) throw new InvalidInputError('A query parameter contains a control character or malformed Unicode.', { field: name.length <= MAX_ID_LENGTH ? name : 'query' });
    }
  }
}

function isApiPath(path: string): boolean {
  return API_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}

/** The Hono app: auth, body cap, the routes, JSON errors, and the web UI at `/`. */
export function createApp(options: AppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { logger } = options;

  app.onError((error, c) => {
    const status = statusOf(error);
    if (status >= 500) logger.error({ err: error, method: c.req.method, path: c.req.path }, 'request failed');
    return sendError(c, error);
  });
  app.notFound((c) => sendError(c, new NotFoundError('route_not_found', `No route for ${c.req.method} ${c.req.path}.`)));

  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    logger.debug({ method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) }, 'request');
  });

  // The UI loads only its own files and talks only to this origin; nothing may frame it.
  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: { defaultSrc: ["'self'"], imgSrc: ["'self'", 'data:'], connectSrc: ["'self'"], styleSrc: ["'self'"], scriptSrc: ["'self'"], frameAncestors: ["'none'"], objectSrc: ["'none'"] },
      crossOriginResourcePolicy: 'same-origin',
    }),
  );

  app.use('*', limitBody(options.maxBodyBytes));

  // Auth off means "whoever can reach loopback is the admin": make sure the request was meant for
  // this loopback server (DNS rebinding) and, when a browser says where it comes from, from its page.
  if (!options.authenticator) {
    app.use('*', async (c, next) => {
      const problem = loopbackRequestProblem(c.req.header('host'), c.req.header('origin'), options.listeningPort?.());
      if (problem) throw new ForbiddenRequestError(/Origin/.test(problem) ? 'forbidden_origin' : 'forbidden_host', problem);
      return next();
    });
  }

  const streamSlots = new StreamSlots(options.limits.streamsPerUser);
  app.use('*', async (c, next) => {
    if (!isApiPath(c.req.path)) return next();
    checkPathAndQuery(c.req.path, new URL(c.req.url).search, c.req.queries());
    c.set('principal', options.authenticator ? options.authenticator.authenticate(c.req.header('authorization')) : LOCAL_PRINCIPAL);
    // A cross-site form or fetch can send text/plain or form data without asking first (a "simple"
    // request, empty body included); application/json cannot. So nothing changes state without it.
    if (STATE_CHANGING.has(c.req.method) && !isJsonContentType(c.req.header('content-type'))) {
      throw new UnsupportedMediaTypeError(`${c.req.method} requests must be sent with Content-Type: application/json, even with an empty body.`);
    }
    if (!wantsEventStream(c.req.header('accept'))) return next();
    // Reserved before the route runs, so an answer is never taken and then its stream refused.
    const slot = streamSlots.acquire(c.get('principal').userId);
    c.set('streamSlot', slot);
    try {
      await next();
    } finally {
      if (!slot.claimed) slot.release();
    }
  });

  // Liveness and readiness apart: a process whose store is down is alive (restarting it does not
  // bring the store back, and it resumes by itself when the store does), but not ready for work.
  app.get('/healthz', (c) => {
    const down = options.isShuttingDown();
    return c.json({ status: down ? 'shutting_down' : 'ok', store: options.store.backend, uptimeMs: Date.now() - options.startedAt, ...storeState(options.store.health?.()) }, down ? 503 : 200);
  });
  const readiness = new ReadinessProbe(options.store);
  app.get('/readyz', async (c) => {
    if (options.isShuttingDown()) throw new ShuttingDownError();
    await readiness.check();
    return c.json({ status: 'ready' as const, store: options.store.backend, ...storeState(options.store.health?.()) });
  });
  const openapi = buildOpenApi(options.version);
  app.get('/openapi.json', (c) => c.json(openapi));
  // The modes and roots a client may pick come with who it is, so a form needs one request.
  app.get('/me', (c) => {
    const { permissionModes, roots } = serverOffer(options.driver.runPolicy, options.driver.serverPolicy);
    return c.json({ ...c.get('principal'), auth: options.authenticator !== undefined, permissionModes, roots });
  });

  app.route('/', runRoutes(options));
  app.route('/', interactionRoutes(options));
  app.route('/', permissionRoutes(options));
  app.route('/', auditRoutes(options));
  app.route('/', offerRoutes(options));
  app.route('/', userEventRoutes(options));

  if (options.webRoot) {
    const root = options.webRoot;
    app.get('*', async (c, next) => {
      if (isApiPath(c.req.path) || PUBLIC_API.has(c.req.path)) return next();
      const file = await serveWebFile(root, c.req.path);
      return file ?? next();
    });
  }
  return app;
}
