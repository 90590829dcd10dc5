import { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app-env.js';
import { serverOffer } from '../server-offer.js';

/** What a client may pick when it starts a run: models and working directories. */
export function offerRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const offer = () => serverOffer(deps.driver.runPolicy, deps.driver.serverPolicy);
  app.get('/models', (c) => {
    const { defaultModel, scriptedModels } = offer();
    return c.json({ defaultModel, scriptedModels });
  });
  app.get('/roots', (c) => c.json({ roots: offer().roots }));
  return app;
}
