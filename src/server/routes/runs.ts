import { Hono } from 'hono';
import { z } from 'zod';
import type { RunEventOf } from '../../events/index.js';
import { InvalidInputError } from '../../errors/index.js';
import { FINISHED_STATUSES, isNextMessageRequest, type Store } from '../../store/index.js';
import { scopeUser } from '../access.js';
import { answerInteraction } from '../answer.js';
import type { AppDeps, AppEnv } from '../app-env.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { resumeSeq } from '../last-event-id.js';
import { runFor } from '../lookups.js';
import { readBody, readQuery } from '../read-body.js';
import { cancelBodySchema, closeBodySchema, messageBodySchema, runsQuerySchema, startRunBodySchema } from '../schemas.js';
import { eventStream } from '../stream-events.js';
import { wantsEventStream } from '../sse.js';
import { assertRunCapacity } from '../../runtime/user-limits.js';
import { interactionView, oneRunView, runView, runViews } from '../views.js';
import { waitUntilFinished } from '../wait-finished.js';
import { sessionRulesOf } from '../../runtime/web-gate.js';
import { askContextFor } from '../../runtime/ask-context.js';
import { projectRulesFor, runCwd } from '../project-rules.js';

const toolCallIdSchema = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

/** The last `tool.completed` event of a call (a resumed run may record a call again), read page by page. */
async function findToolCompleted(store: Store, runId: string, toolCallId: string): Promise<RunEventOf<'tool.completed'> | undefined> {
  let found: RunEventOf<'tool.completed'> | undefined;
  let after = 0;
  for (;;) {
    const page = await store.readEvents(runId, { afterSeq: after, limit: 500 });
    for (const event of page) if (event.type === 'tool.completed' && event.data.toolCallId === toolCallId) found = event;
    if (page.length < 500) return found;
    after = page[page.length - 1]!.seq;
  }
}

/** How long `POST /runs/{id}/close` waits for the run to complete before answering 202. */
const CLOSE_WAIT_MS = 5_000;

/** Runs: start, list, read, follow (SSE), send the next message, close, cancel, see what a run waits for. */
export function runRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { store, driver } = deps;
  const starting = new Map<string, Promise<unknown>>();
  const oneAtATime = async <T>(userId: string, work: () => Promise<T>): Promise<T> => {
    const next = (starting.get(userId) ?? Promise.resolve()).catch(() => {}).then(work);
    starting.set(userId, next);
    try {
      return await next;
    } finally {
      if (starting.get(userId) === next) starting.delete(userId);
    }
  };

  app.post('/runs', async (c) => {
    const principal = c.get('principal');
    const body = await readBody(c, startRunBodySchema);
    if (deps.isShuttingDown()) throw new ConflictError('shutting_down', 'The server is shutting down; start the run on another instance.');
    // The count and the start are one step per user, so parallel requests cannot all pass the count.
    const run = await oneAtATime(principal.userId, async () => {
      await assertRunCapacity(store, principal.userId, deps.limits);
      return driver.start({ ...body, userId: principal.userId, role: principal.role });
    });
    if (wantsEventStream(c.req.header('accept'))) return eventStream(deps, run.id, 0, { headers: { 'x-run-id': run.id }, slot: c.get('streamSlot') });
    return c.json(runView(run), 201, { location: `/runs/${run.id}` });
  });

  app.get('/runs', async (c) => {
    const principal = c.get('principal');
    const query = readQuery(c, runsQuerySchema);
    const runs = await store.listRuns({ status: query.status, userId: scopeUser(principal, query.userId), limit: query.limit ?? 100 });
    return c.json({ runs: await runViews(store, runs) });
  });

  app.get('/runs/:id', async (c) => {
    const run = await runFor(store, c.get('principal'), c.req.param('id'));
    return c.json(await oneRunView(store, run));
  });

  // The rules the run's gate added during the run ("always, this run" answers). The engine keeps them
  // only in the memory of the process driving the run; the store knows them from the answered approvals.
  // With them, the project rules of the run's folder and whether the caller may add one.
  app.get('/runs/:id/rules', async (c) => {
    const run = await runFor(store, c.get('principal'), c.req.param('id'));
    const cwd = runCwd(run);
    const project = cwd ? projectRulesFor(driver.serverPolicy, c.get('principal'), cwd) : undefined;
    return c.json({ runId: run.id, session: await sessionRulesOf(store, run.id), ...(project ? { project } : {}) });
  });

  // A tool call's whole output: what the model got, or — when that was cut — the whole text kept
  // with the call's event (Bash: up to 5,000,000 characters per stream). Plain text, for the page's
  // "show all", copy and download; the event stream carries only its length.
  app.get('/runs/:id/tool-calls/:toolCallId/output', async (c) => {
    const run = await runFor(store, c.get('principal'), c.req.param('id'));
    const parsed = toolCallIdSchema.safeParse(c.req.param('toolCallId'));
    if (!parsed.success) throw new InvalidInputError(`toolCallId: ${parsed.error.issues[0]!.message}`, { field: 'toolCallId' });
    const completed = await findToolCompleted(store, run.id, parsed.data);
    if (!completed) throw new NotFoundError('tool_call_not_found', `Run "${run.id}" has no finished tool call "${parsed.data}".`);
    const text = completed.data.fullContent ?? completed.data.content;
    const name = `${completed.data.toolName}-${parsed.data}.txt`.replace(/[^\w.-]/g, '_');
    return c.body(text, 200, {
      'content-type': 'text/plain; charset=utf-8',
      'content-disposition': `${c.req.query('download') === '1' ? 'attachment' : 'inline'}; filename="${name}"`,
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, no-store',
    });
  });

  app.get('/runs/:id/events', async (c) => {
    const run = await runFor(store, c.get('principal'), c.req.param('id'));
    const after = resumeSeq(c.req.header('last-event-id'), c.req.query('after'));
    return eventStream(deps, run.id, after, { slot: c.get('streamSlot') });
  });

  app.post('/runs/:id/messages', async (c) => {
    const principal = c.get('principal');
    const run = await runFor(store, principal, c.req.param('id'));
    const body = await readBody(c, messageBodySchema);
    if (FINISHED_STATUSES.includes(run.status)) throw new ConflictError('run_finished', `Run "${run.id}" has ${run.status}; it takes no more messages.`);
    const pending = await store.listInteractions({ runId: run.id, status: ['pending'] });
    const ask = pending.find((r) => isNextMessageRequest(r.request));
    if (!ask) {
      throw new ConflictError('nothing_to_answer', `Run "${run.id}" is not waiting for a message${pending.length > 0 ? ` (it waits for interaction "${pending[0]!.id}")` : ''}.`);
    }
    const stream = wantsEventStream(c.req.header('accept'));
    const afterSeq = stream ? await store.lastEventSeq(run.id) : 0;
    const record = await answerInteraction(driver, principal, ask, { kind: 'input', text: body.text });
    if (stream) return eventStream(deps, run.id, afterSeq, { slot: c.get('streamSlot') });
    return c.json({ interaction: interactionView(record, run.userId) }, 202);
  });

  app.post('/runs/:id/cancel', async (c) => {
    const run = await runFor(store, c.get('principal'), c.req.param('id'));
    const body = await readBody(c, cancelBodySchema);
    if (FINISHED_STATUSES.includes(run.status)) throw new ConflictError('run_finished', `Run "${run.id}" has already ${run.status === 'max_steps' ? 'stopped' : run.status}.`);
    await driver.cancel(run.id, body.reason ?? `cancelled by ${c.get('principal').userId}`);
    const after = await store.getRun(run.id);
    return c.json(await oneRunView(store, after ?? run));
  });

  // An idle run is done with its task: closing it answers its next-message ask with nothing, so the
  // loop ends the run `completed` with its last answer as the final text (wherever it is driven).
  app.post('/runs/:id/close', async (c) => {
    const principal = c.get('principal');
    const run = await runFor(store, principal, c.req.param('id'));
    await readBody(c, closeBodySchema);
    if (FINISHED_STATUSES.includes(run.status)) throw new ConflictError('run_finished', `Run "${run.id}" has already ${run.status === 'max_steps' ? 'stopped' : run.status}.`);
    const pending = await store.listInteractions({ runId: run.id, status: ['pending'] });
    const ask = pending.find((r) => isNextMessageRequest(r.request));
    if (!ask) {
      const what = pending.length > 0 ? `it waits for interaction "${pending[0]!.id}"; answer it, or cancel the run` : 'it is still working; cancel it to stop it now';
      throw new ConflictError('not_idle', `Run "${run.id}" is not idle (${what}).`);
    }
    await answerInteraction(driver, principal, ask, { kind: 'input', text: '' });
    const after = await waitUntilFinished(store, run.id, CLOSE_WAIT_MS);
    const view = await oneRunView(store, after ?? run);
    // 200 once the run has completed; 202 when it is still closing (driven elsewhere, or slow): follow GET /runs/{id}.
    return c.json(view, FINISHED_STATUSES.includes(view.status) ? 200 : 202);
  });

  app.get('/runs/:id/suspended', async (c) => {
    const run = await runFor(store, c.get('principal'), c.req.param('id'));
    const pending = await store.listInteractions({ runId: run.id, status: ['pending'] });
    const waitingFor = pending.find((r) => r.id === run.pendingInteractionId) ?? pending[0];
    if (!waitingFor) throw new NotFoundError('not_waiting', `Run "${run.id}" is ${run.status} and waits for no interaction.`);
    return c.json({ runId: run.id, status: run.status, interaction: interactionView(waitingFor, run.userId, await askContextFor(store, waitingFor, run)) });
  });

  return app;
}

