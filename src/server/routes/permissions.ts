import { Hono } from 'hono';
import { assertAccess } from '../access.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { NotFoundError } from '../errors.js';
import { parseWith, readBody } from '../read-body.js';
import { permissionKindSchema, ruleBodySchema, ruleTextSchema } from '../schemas.js';
import { permissionsView } from '../views.js';

/**
 * A user's remembered allow and deny patterns. Adding a rule to one list takes the same rule off
 * the other, so a pattern never both allows and denies (seed 003 §2.2).
 */
export function permissionRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { store } = deps;

  const view = async (userId: string) => permissionsView(userId, await store.listUserPermissions(userId));

  app.get('/permissions/:userId', async (c) => {
    const userId = c.req.param('userId');
    assertAccess(c.get('principal'), userId, `The permissions of "${userId}"`);
    return c.json(await view(userId));
  });

  for (const behavior of ['allow', 'deny'] as const) {
    app.post(`/permissions/:userId/${behavior}`, async (c) => {
      const principal = c.get('principal');
      const userId = c.req.param('userId');
      assertAccess(principal, userId, `The permissions of "${userId}"`);
      const { rule } = await readBody(c, ruleBodySchema);
      await store.removeUserPermission(userId, rule, behavior === 'allow' ? 'deny' : 'allow');
      await store.addUserPermission({ userId, rule, behavior, createdBy: principal.userId });
      return c.json(await view(userId), 201);
    });
  }

  app.delete('/permissions/:userId/:kind/:rule{.+}', async (c) => {
    const userId = c.req.param('userId');
    assertAccess(c.get('principal'), userId, `The permissions of "${userId}"`);
    const kind = parseWith(permissionKindSchema, c.req.param('kind'));
    // Hono decodes path parameters, so `Bash(npm%20test%3A*)` arrives as written.
    const rule = parseWith(ruleTextSchema, c.req.param('rule'));
    const removed = await store.removeUserPermission(userId, rule, kind);
    if (removed === 0) throw new NotFoundError('rule_not_found', `"${rule}" is not in the ${kind} list of "${userId}".`);
    return c.json(await view(userId));
  });

  return app;
}
