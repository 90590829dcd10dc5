import { Hono } from 'hono';
import { assertAccess } from '../access.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { NotFoundError } from '../errors.js';
import { parseWith, readBody } from '../read-body.js';
import { permissionKindSchema, ruleBodySchema, storedRuleSchema } from '../schemas.js';
import { permissionsView } from '../views.js';

/**
 * A user's remembered allow and deny patterns. Adding a rule to one list takes the same rule off
 * the other, so a pattern never both allows and denies. Who may change what follows
 * the server policy: anyone may deny themselves more; a non-admin adds allow rules only when the
 * operator permits it, and never removes (or overrides with an allow) a deny someone else put there.
 */
export function permissionRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { store } = deps;
  const policy = deps.driver.serverPolicy;

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
      const existing = await store.listUserPermissions(userId);
      policy.checkUserRuleAdd(principal, userId, rule, behavior, existing);
      await store.removeUserPermission(userId, rule, behavior === 'allow' ? 'deny' : 'allow');
      // An admin's rule is recorded as theirs even when the user had the same one (they may not remove it then).
      const mine = existing.find((r) => r.rule === rule && r.behavior === behavior);
      if (mine && mine.createdBy !== principal.userId && principal.role === 'admin') await store.removeUserPermission(userId, rule, behavior);
      await store.addUserPermission({ userId, rule, behavior, createdBy: principal.userId });
      return c.json(await view(userId), 201);
    });
  }

  app.delete('/permissions/:userId/:kind/:rule{.+}', async (c) => {
    const principal = c.get('principal');
    const userId = c.req.param('userId');
    assertAccess(principal, userId, `The permissions of "${userId}"`);
    const kind = parseWith(permissionKindSchema, c.req.param('kind'));
    // Hono decodes path parameters, so `Bash(npm%20test%3A*)` arrives as written. Only looked up:
    // a rule stored before the parser refused its spelling must stay removable.
    const rule = parseWith(storedRuleSchema, c.req.param('rule'));
    const record = (await store.listUserPermissions(userId)).find((r) => r.rule === rule && r.behavior === kind);
    if (record) policy.checkUserRuleRemove(principal, record);
    const removed = await store.removeUserPermission(userId, rule, kind);
    if (removed === 0) throw new NotFoundError('rule_not_found', `"${rule}" is not in the ${kind} list of "${userId}".`);
    return c.json(await view(userId));
  });

  return app;
}
