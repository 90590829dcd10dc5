import { Hono } from 'hono';
import { z } from 'zod';
import { askContextFor } from '../../runtime/ask-context.js';
import type { InteractionRecord, RunRecord } from '../../store/index.js';
import { answerInteraction } from '../answer.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { interactionFor, runFor } from '../lookups.js';
import { readBody, readQuery } from '../read-body.js';
import { interactionsQuerySchema } from '../schemas.js';
import { eventStream } from '../stream-events.js';
import { wantsEventStream } from '../sse.js';
import { interactionView } from '../views.js';

/** Interactions: the inbox, one request, and answering it. */
export function interactionRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { store, driver } = deps;

  app.get('/interactions', async (c) => {
    const principal = c.get('principal');
    const query = readQuery(c, interactionsQuerySchema);
    if (query.runId !== undefined) await runFor(store, principal, query.runId);
    const records = await store.listInteractions({
      runId: query.runId,
      status: query.status,
      userId: principal.role === 'admin' ? undefined : principal.userId,
      limit: query.limit ?? 100,
    });
    return c.json({ interactions: await withOwners(deps, records) });
  });

  app.get('/interactions/:id', async (c) => {
    const { record, run } = await interactionFor(store, c.get('principal'), c.req.param('id'));
    return c.json(interactionView(record, run.userId, await askContextFor(store, record, run)));
  });

  app.post('/interactions/:id/respond', async (c) => {
    const principal = c.get('principal');
    const { record, run } = await interactionFor(store, principal, c.req.param('id'));
    const raw = await readBody(c, z.record(z.string(), z.unknown()));
    // The answer's response may carry the continued run as a stream, from the log's
    // end as it was before the answer, so the answer's own event is the first one sent.
    const stream = wantsEventStream(c.req.header('accept'));
    const afterSeq = stream ? await store.lastEventSeq(run.id) : 0;
    const answered = await answerInteraction(driver, principal, record, raw, run);
    if (stream) return eventStream(deps, run.id, afterSeq, { slot: c.get('streamSlot') });
    return c.json(interactionView(answered, run.userId, await askContextFor(store, answered, run)));
  });

  return app;
}

/** Adds each record's owner (its run's user) and context, reading each run (and root run) once. */
async function withOwners(deps: AppDeps, records: readonly InteractionRecord[]) {
  const runs = new Map<string, Promise<RunRecord | undefined>>();
  const cached = { getRun: (id: string) => (runs.get(id) ?? runs.set(id, deps.store.getRun(id)).get(id))! };
  const out = [];
  for (const record of records) {
    const run = await cached.getRun(record.runId);
    out.push(interactionView(record, run?.userId ?? '', run ? await askContextFor(cached, record, run) : undefined));
  }
  return out;
}
