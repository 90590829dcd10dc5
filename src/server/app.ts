import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import type { AppDeps, AppEnv } from './app-env.js';
import { LOCAL_PRINCIPAL, type TokenAuthenticator } from './auth.js';
import { sendError, statusOf } from './error-response.js';
import { NotFoundError, PayloadTooLargeError } from './errors.js';
import { buildOpenApi } from './openapi.js';
import { auditRoutes } from './routes/audit.js';
import { interactionRoutes } from './routes/interactions.js';
import { permissionRoutes } from './routes/permissions.js';
import { runRoutes } from './routes/runs.js';
import { serveWebFile } from './static-files.js';

export interface AppOptions extends AppDeps {
  /** undefined: no auth (the server has checked it is bound to loopback). */
  authenticator: TokenAuthenticator | undefined;
  /** Largest request body accepted, bytes. */
  maxBodyBytes: number;
  webRoot: string | undefined;
  version: string;
}

/** Paths answered without a token: health checks, the API description and the web UI's files. */
const PUBLIC_API = new Set(['/healthz', '/openapi.json']);
const API_PREFIXES = ['/runs', '/interactions', '/permissions', '/audit', '/me'];

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

  app.use(
    '*',
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: () => {
        throw new PayloadTooLargeError(options.maxBodyBytes);
      },
    }),
  );

  app.use('*', async (c, next) => {
    if (!isApiPath(c.req.path)) return next();
    c.set('principal', options.authenticator ? options.authenticator.authenticate(c.req.header('authorization')) : LOCAL_PRINCIPAL);
    return next();
  });

  app.get('/healthz', (c) => {
    const down = options.isShuttingDown();
    return c.json({ status: down ? 'shutting_down' : 'ok', store: options.store.backend, uptimeMs: Date.now() - options.startedAt }, down ? 503 : 200);
  });
  const openapi = buildOpenApi(options.version);
  app.get('/openapi.json', (c) => c.json(openapi));
  app.get('/me', (c) => c.json({ ...c.get('principal'), auth: options.authenticator !== undefined }));

  app.route('/', runRoutes(options));
  app.route('/', interactionRoutes(options));
  app.route('/', permissionRoutes(options));
  app.route('/', auditRoutes(options));

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
