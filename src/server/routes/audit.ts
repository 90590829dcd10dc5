import { Hono } from 'hono';
import { scopeUser } from '../access.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { runFor } from '../lookups.js';
import { readQuery } from '../read-body.js';
import { auditQuerySchema } from '../schemas.js';

/** The permission audit log: every decision with why it was made; a user sees their own entries. */
export function auditRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/audit', async (c) => {
    const principal = c.get('principal');
    const query = readQuery(c, auditQuerySchema);
    if (query.runId !== undefined) await runFor(deps.store, principal, query.runId);
    const entries = await deps.store.listAudit({ runId: query.runId, userId: scopeUser(principal, query.userId), since: query.since, limit: query.limit ?? 200 });
    return c.json({ entries });
  });
  return app;
}
