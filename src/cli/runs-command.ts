/**
 * `sage runs …`, `sage respond …` and `sage interactions …`: list, show, resume, close, cancel, recover
 * and prune durable runs, and answer their requests from any process. Every command takes
 * `--db PATH` (SQLite; `SAGE_DATABASE_URL` picks Postgres) and `--json`. Exit codes: 0 ok,
 * 1 failed, 2 usage error; errors are one line on stderr (main.ts reports them).
 */
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { endQuietlyOnClosedPipe } from './closed-pipe.js';
import { checkDbPath } from './output-path.js';
import { IGNORE_FLAG } from '../runtime/settings-check.js';
import { checkBeforeResume } from '../runtime/admission-checks.js';
import { SageError } from '../errors/index.js';
import { UsageError } from './usage-error.js';
import { MIN_ID_PREFIX, resolveId } from './resolve-id.js';
import { combinedResponse, howToAnswerCombined } from './combined-answer.js';
import type { RunEvent } from '../events/index.js';
import { eventLinePrinter, oneLine, renderEventLine } from './event-renderer.js';
import { InteractionNotFoundError, InvalidResponseError, type InteractionRequest } from '../interaction/index.js';
import { FINISHED_STATUSES, isNextMessageRequest, RUN_STATUSES, RunNotFoundError, type InteractionRecord, type RunOwnerRecord, type RunRecord, type Store, type StoredRunStatus } from '../store/index.js';
import { DEFAULT_SQLITE_PATH, openStore } from '../store/open-store.js';
import { cliRuntime } from '../runtime/cli-runtime.js';
import { runSpecOf } from '../runtime/run-spec.js';
import { askContextFor, askContextLine, type AskContext } from '../runtime/ask-context.js';
import { DurableRunner, type DurableRunHandle } from '../durable/durable-runner.js';
import { RunFinishedError } from '../durable/errors.js';
import { deadOwners } from '../durable/dead-owners.js';

const STATUSES: readonly StoredRunStatus[] = RUN_STATUSES;

interface CommonFlags {
  db?: string;
  json?: boolean;
}

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/**
 * Opens the store the flags name, runs `fn`, and closes everything it opened. With `ifNoStore`, a
 * SQLite file that does not exist yet is not created: its answer (no runs, or not found) is given
 * instead, so reading a folder's runs never leaves a `.sage/` behind.
 */
async function withStore<T>(flags: CommonFlags, fn: (store: Store) => Promise<T>, ifNoStore?: () => T): Promise<T> {
  // A folder or an unwritable place is the flag's mistake (exit 2), said before SQLite tries it.
  if (flags.db) checkDbPath(flags.db);
  if (ifNoStore && !sqliteFileExists(flags)) return ifNoStore();
  const store = await openStore({ ...(flags.db ? { db: flags.db } : {}) });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** False only for a SQLite store (`--db`, or the default without SAGE_DATABASE_URL) whose file is not there. */
function sqliteFileExists(flags: CommonFlags): boolean {
  if (!flags.db && process.env.SAGE_DATABASE_URL) return true;
  return existsSync(resolve(flags.db ?? DEFAULT_SQLITE_PATH));
}

const RUN_ID_HELP = `the run id, or a start of it of at least ${MIN_ID_PREFIX} characters that names one run`;

/** A filter by run: a start naming one run is taken for it; a run that is not there lists nothing, as before. */
async function runIdOrAsGiven(store: Store, given: string): Promise<string> {
  try {
    return await resolveId(store, 'run', given);
  } catch (error) {
    if (error instanceof RunNotFoundError) return given;
    throw error;
  }
}

const runNotFound = (id: string) => (): never => {
  throw new RunNotFoundError(id);
};

/** A runner for this CLI process: nobody waits at a terminal, so a run is released as soon as it asks. */
async function withRunner<T>(store: Store, fn: (runner: DurableRunner) => Promise<T>, flags: { ignoreBrokenSettings?: boolean } = {}): Promise<T> {
  const runtime = cliRuntime(store, flags.ignoreBrokenSettings ? { ignoreBrokenSettings: true } : {});
  const runner = new DurableRunner({ store, runtime, idleSuspendMs: 0 });
  await runner.open();
  try {
    return await fn(runner);
  } finally {
    await runner.close();
  }
}

/**
 * Resuming a run rebuilds its gate from the settings files of its cwd (and its stored rules): a
 * file that does not load stops here, before an answer is stored or a step runs, as `sage run` does.
 */
async function refuseBrokenSettings(store: Store, runId: string, flags: { ignoreBrokenSettings?: boolean }): Promise<void> {
  const run = await store.getRun(runId);
  if (!run) return; // reported as not found by the command itself
  await checkBeforeResume(run, flags);
}

const ignoreBrokenHelp = 'go on when a settings file of the run does not load: what is broken is skipped, so its rules are NOT applied';

function common(command: Command): Command {
  return command.option('--db <path>', 'SQLite database (default .sage/sage.db); SAGE_DATABASE_URL selects Postgres').option('--json', 'print JSON');
}

/** Drives a run this process holds until it is suspended or finished, printing its events. */
export async function driveToRest(runner: DurableRunner, store: Store, handle: DurableRunHandle, render?: (event: RunEvent) => void): Promise<RunRecord> {
  const runId = handle.runId;
  let cursor = (await store.readEvents(runId, { afterSeq: 0 })).at(-1)?.seq ?? 0;
  let pump = Promise.resolve();
  const drain = () => {
    pump = pump.then(async () => {
      for (const event of await store.readEvents(runId, { afterSeq: cursor })) {
        cursor = event.seq;
        render?.(event);
      }
    });
    return pump;
  };
  // Events before the resume were printed by whoever drove the run then; show the new ones live.
  const unsubscribe = render ? await store.subscribe(runId, (n) => void (n.type === 'events' && drain())) : undefined;
  try {
    let current: DurableRunHandle | undefined = handle;
    for (;;) {
      while (current) {
        await current.outcome;
        // An answer that landed while the run was being suspended resumes it again here.
        current = runner.handle(runId);
      }
      const record = await store.getRun(runId);
      if (!record) throw new RunNotFoundError(runId);
      // A one-task run (`sage run --detach`) ends with its final text: the loop's "next message" ask is answered empty.
      const next = (record.status === 'idle' || record.status === 'suspended') && oneTaskOf(record) ? await nextMessageAsk(store, record) : undefined;
      if (!next) {
        await drain();
        return record;
      }
      const result = await runner.respond(next.id, { kind: 'input', text: '', userId: 'sage' });
      current = result.delivered === 'resumed' ? result.handle : runner.handle(runId);
      if (!current) {
        await drain();
        return (await store.getRun(runId)) ?? record;
      }
    }
  } finally {
    await unsubscribe?.();
  }
}

/** A one-task run that still asks for a next message (version 1 RunSpecs; version 2 ones just end). */
function oneTaskOf(record: RunRecord): boolean {
  try {
    return runSpecOf(record).oneTask;
  } catch {
    return false;
  }
}

async function nextMessageAsk(store: Store, run: RunRecord): Promise<InteractionRecord | undefined> {
  if (!run.pendingInteractionId) return undefined;
  const interaction = await store.getInteraction(run.pendingInteractionId);
  return interaction?.status === 'pending' && isNextMessageRequest(interaction.request) ? interaction : undefined;
}

function printRunEnd(record: RunRecord, json: boolean | undefined): void {
  if (json) return;
  if (record.status === 'suspended') out(`run ${record.id} is suspended${record.pendingInteractionId ? `, waiting for ${record.pendingInteractionId}` : ''}`);
  else if (record.status === 'idle') out(`run ${record.id} is idle, waiting for the next message: sage respond ${record.pendingInteractionId ?? '…'} --text "…" goes on, sage runs close ${record.id} ends it`);
  else out(`run ${record.id}: ${record.status}`);
}

/** `30d`, `12h`, `90m` → milliseconds; anything else is a usage error. */
export function parseAge(text: string): number {
  const match = /^(\d+)([dhm])$/.exec(text.trim());
  if (!match) throw new UsageError(`--older-than must be a number followed by d, h or m (e.g. 30d, 12h, 90m), not "${text}".`);
  const n = Number(match[1]);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
  return n * unit;
}

function summarizeRequest(request: InteractionRequest): string {
  switch (request.kind) {
    case 'confirm':
      return `${request.title}${request.input !== undefined ? ` ${oneLine(JSON.stringify(request.input), 120)}` : ''}`;
    case 'questions':
      return request.questions.map((q) => `${q.question} [${q.options.map((o) => o.label).join(' | ')}]`).join('; ');
    case 'select':
      return `${request.title} [${request.options.map((o) => o.value).join(' | ')}]`;
    default:
      return request.title;
  }
}

/** How to answer a request from the command line. */
function howToAnswer(request: InteractionRequest): string {
  switch (request.kind) {
    case 'confirm':
      return '--allow | --deny [--message M]';
    case 'input':
      return '--text T';
    case 'select':
      return `--select ${request.multiple ? 'V…' : 'V'}`;
    case 'questions':
      return '--answer "Question=Label"…';
    case 'combined':
      return howToAnswerCombined(request);
  }
}

interface RespondFlags extends CommonFlags {
  allow?: boolean;
  deny?: boolean;
  message?: string;
  text?: string;
  select?: string[];
  answer?: string[];
  user?: string;
}

/**
 * The one answer flag given; none or several (or a stray --message) is a usage error. --message
 * goes with --deny only: an approval carries no note to the agent, so a message with --allow
 * would be dropped without a word; it is refused instead.
 */
export function answerFlag(flags: RespondFlags, request?: InteractionRequest): 'allow' | 'deny' | 'text' | 'select' | 'answer' {
  const given = (['allow', 'deny', 'text', 'select', 'answer'] as const).filter((k) => flags[k] !== undefined && flags[k] !== false);
  if (given.length !== 1) {
    throw new UsageError(`Give exactly one of --allow, --deny, --text, --select, --answer${request ? ` (this ${request.kind} request takes ${howToAnswer(request)})` : ''}.`);
  }
  const flag = given[0]!;
  if (flags.message !== undefined && flag !== 'deny') {
    throw new UsageError(`--message goes with --deny (it tells the agent why); ${flag === 'allow' ? 'an approval carries no message: drop --message, or use --deny --message' : `--${flag} takes no message`}.`);
  }
  return flag;
}

/** Builds the response the flags describe for `request`; a mismatch is a usage error. */
export function responseFromFlags(request: InteractionRequest, flags: RespondFlags): Record<string, unknown> {
  const flag = answerFlag(flags, request);
  if (request.kind === 'combined' && (flag === 'answer' || flag === 'deny')) {
    if (flags.message !== undefined) throw new UsageError('A form is declined without a message: drop --message.');
    return combinedResponse(request, flag, flags.answer ?? []);
  }
  const expected = { allow: 'confirm', deny: 'confirm', text: 'input', select: 'select', answer: 'questions' }[flag];
  if (request.kind !== expected) throw new UsageError(`Interaction ${request.id} is a ${request.kind} request: answer it with ${howToAnswer(request)}, not --${flag}.`);
  switch (flag) {
    case 'allow':
    case 'deny':
      return { kind: 'confirm', confirmed: flag === 'allow', ...(flag === 'deny' && flags.message !== undefined ? { message: flags.message } : {}) };
    case 'text':
      return { kind: 'input', text: flags.text };
    case 'select':
      return { kind: 'select', selected: flags.select };
    case 'answer': {
      if (request.kind !== 'questions') throw new UsageError('unreachable');
      const answers: Record<string, string | string[]> = {};
      for (const pair of flags.answer ?? []) {
        const at = pair.lastIndexOf('=');
        if (at <= 0) throw new UsageError(`--answer takes "Question=Label", not "${pair}".`);
        const key = pair.slice(0, at).trim();
        const label = pair.slice(at + 1).trim();
        // The question's text, or its short header.
        const question = request.questions.find((q) => q.question === key) ?? request.questions.find((q) => q.header.toLowerCase() === key.toLowerCase());
        if (!question) throw new UsageError(`"${key}" is not one of the questions asked (${request.questions.map((q) => `"${q.question}"`).join(', ')}).`);
        const option = question.options.find((o) => o.label === label) ?? question.options.find((o) => o.label.toLowerCase() === label.toLowerCase());
        const value = option?.label ?? label;
        const prior = answers[question.question];
        answers[question.question] = prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
      }
      return { kind: 'questions', answers };
    }
  }
}

function defaultUser(): string {
  try {
    return userInfo().username || 'cli';
  } catch {
    return 'cli';
  }
}

/**
 * The risk the gate judged an approval to carry (put on the request's metadata, as the terminal and
 * web page read it); null for requests that are not approvals or were asked without one.
 */
export function riskOf(request: InteractionRequest): string | null {
  const risk = (request.metadata as { risk?: unknown } | undefined)?.risk;
  return typeof risk === 'string' && /^(LOW|MEDIUM|HIGH|UNKNOWN)$/.test(risk) ? risk : null;
}

function interactionView(i: InteractionRecord, context?: AskContext) {
  return {
    id: i.id,
    runId: i.runId,
    kind: i.kind,
    status: i.status,
    risk: riskOf(i.request),
    title: i.request.title,
    summary: summarizeRequest(i.request),
    answerWith: i.status === 'pending' ? howToAnswer(i.request) : undefined,
    request: i.request,
    response: i.response,
    answeredBy: i.answeredBy,
    answeredAt: i.answeredAt,
    reason: i.reason,
    createdAt: i.createdAt,
    expiresAt: i.expiresAt,
    ...(context ? { context } : {}),
  };
}

/** Each request's context, reading each run once. */
async function contextsOf(store: Store, list: readonly InteractionRecord[]): Promise<Map<string, AskContext>> {
  const runs = new Map<string, Promise<RunRecord | undefined>>();
  const cached = { getRun: (id: string) => (runs.get(id) ?? runs.set(id, store.getRun(id)).get(id))! };
  const out = new Map<string, AskContext>();
  for (const i of list) {
    const context = await askContextFor(cached, i);
    if (context) out.set(i.id, context);
  }
  return out;
}

/** What `runs list` and `runs show` say of a run whose owner, a process of this host, died. */
const ORPHANED = 'orphaned';

/**
 * A run as listed: one held by a dead owner of this host is `orphaned` (with who died), never
 * `running` — nobody drives it until it is taken over.
 */
function orphanView(run: RunRecord, dead: ReadonlyMap<string, { host: string; pid: number }>) {
  const died = run.owner !== null ? dead.get(run.owner) : undefined;
  if (!died) return { ...run, ownerDied: undefined };
  return { ...run, status: ORPHANED, ownerDied: { host: died.host, pid: died.pid } };
}

export function registerRunsCommands(program: Command): void {
  // `sage runs show ID | head`: a reader that went away is not an error.
  endQuietlyOnClosedPipe();
  const runs = program.command('runs').description('durable runs in the store: list, show, resume, close, cancel, recover, prune');

  common(runs.command('list').description('list runs, newest first'))
    .option('--status <status>', `only runs in this status (${STATUSES.join(', ')})`)
    .option('--limit <n>', 'at most n runs', '100')
    .action(async (flags: CommonFlags & { status?: string; limit: string }) => {
      const statuses = flags.status?.split(',').map((s) => s.trim());
      const bad = statuses?.find((s) => !STATUSES.includes(s as StoredRunStatus));
      if (bad !== undefined) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, not "${bad}".`);
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number.');
      const { list, dead } = await withStore(
        flags,
        async (store) => {
          const list = await store.listRuns({ ...(statuses ? { status: statuses as StoredRunStatus[] } : {}), limit });
          return { list, dead: await deadOwners(store, list) };
        },
        () => ({ list: [] as RunRecord[], dead: new Map<string, RunOwnerRecord>() }),
      );
      const shown = list.map((r) => orphanView(r, dead));
      if (flags.json) return out(JSON.stringify(shown));
      if (shown.length === 0) return out('no runs');
      for (const r of shown) {
        const tail = r.ownerDied ? `  ${ORPHANED}: owner pid ${r.ownerDied.pid} died; sage runs recover` : '';
        out(`${r.id}  ${r.status.padEnd(9)}  ${r.updatedAt}  ${oneLine(r.task, 60)}${r.pendingInteractionId ? `  waiting: ${r.pendingInteractionId}` : ''}${tail}`);
      }
    });

  common(runs.command('show').description('a run: status, task, pending request, final text or error, the last events').argument('<id>', RUN_ID_HELP))
    .option('--events <n>', 'how many of the last events to show', '10')
    .action(async (given: string, flags: CommonFlags & { events: string }) => {
      const count = Number(flags.events);
      if (!Number.isInteger(count) || count < 0) throw new UsageError('--events must be a whole number.');
      await withStore(flags, async (store) => {
        const id = await resolveId(store, 'run', given);
        const stored = await store.getRun(id);
        if (!stored) throw new RunNotFoundError(id);
        const run = orphanView(stored, await deadOwners(store, [stored]));
        const pending = run.pendingInteractionId ? await store.getInteraction(run.pendingInteractionId) : undefined;
        const lastSeq = await store.lastEventSeq(id);
        // Text leaves out the lifecycle chatter (state changes, deltas); JSON has the raw last events.
        const noisy = (e: RunEvent) => !flags.json && (e.type === 'state.changed' || e.type === 'message.delta');
        const recent = count === 0 ? [] : await store.readEvents(id, { afterSeq: Math.max(0, lastSeq - (flags.json ? count : count * 5)) });
        const events = recent.filter((e) => !noisy(e)).slice(-count);
        if (flags.json) {
          const pendingView = pending ? interactionView(pending, await askContextFor(store, pending, stored)) : null;
          return out(JSON.stringify({ ...run, pendingInteraction: pendingView, lastSeq, events }));
        }
        out(`run      ${run.id}`);
        if (run.ownerDied) {
          const who = `owner pid ${run.ownerDied.pid} on ${run.ownerDied.host} died`;
          out(`status   ${ORPHANED} (${who}: sage runs recover takes it over, as does an answer or a starting sage serve)`);
        } else out(`status   ${run.status}`);
        out(`task     ${oneLine(run.task, 200)}`);
        out(`user     ${run.userId}   channel ${run.channel}   model ${String((run.options as { model?: string }).model)}`);
        out(`created  ${run.createdAt}   updated ${run.updatedAt}${run.finishedAt ? `   finished ${run.finishedAt}` : ''}`);
        if (run.owner) out(`owner    ${run.owner} (lease until ${run.leaseExpiresAt})`);
        if (pending) {
          const context = await askContextFor(store, pending, stored);
          const risk = riskOf(pending.request) ? `, risk ${riskOf(pending.request)}` : '';
          out(`waiting  ${pending.id} (${pending.status}${risk}): ${summarizeRequest(pending.request)}`);
          if (context) out(`         ${askContextLine(context)}`);
          out(`         answer: sage respond ${pending.id} ${howToAnswer(pending.request)}`);
        }
        if (run.finalText !== null) out(`final    ${run.finalText}`);
        if (run.error) out(`error    ${run.error.code}: ${run.error.message}`);
        if (events.length) {
          out(`events   (last ${events.length} of ${lastSeq})`);
          for (const e of events) out(`  ${String(e.seq).padStart(4)} ${e.type}${renderEventLine(e) ? ` ${renderEventLine(e)!.trim()}` : ''}`);
        }
      }, runNotFound(given));
    });

  common(runs.command('resume').description('drive a suspended run here until its next suspension or its end').argument('<id>', RUN_ID_HELP))
    .option(IGNORE_FLAG, ignoreBrokenHelp)
    .action(async (given: string, flags: CommonFlags & { ignoreBrokenSettings?: boolean }) => {
      const record = await withStore(flags, async (store) => {
        const id = await resolveId(store, 'run', given);
        await refuseBrokenSettings(store, id, flags);
        return withRunner(store, async (runner) => driveToRest(runner, store, await runner.resume(id), eventLinePrinter(flags.json)), flags);
      }, runNotFound(given));
      printRunEnd(record, flags.json);
      if (record.status === 'failed') process.exitCode = 1;
    });

  common(runs.command('cancel').description('cancel a run (a live owner is told through the store)').argument('<id>', RUN_ID_HELP)).action(async (given: string, flags: CommonFlags) => {
    const { id, where } = await withStore(flags, async (store) => {
      const id = await resolveId(store, 'run', given);
      return { id, where: await withRunner(store, (runner) => runner.cancel(id, 'cancelled with sage runs cancel')) };
    }, runNotFound(given));
    if (flags.json) out(JSON.stringify({ runId: id, cancelled: where }));
    else out(where === 'notified' ? `run ${id}: cancel sent to the process that drives it` : `run ${id}: cancelled`);
  });

  common(runs.command('close').description('end an idle run (it answered and waits for the next message) as completed').argument('<id>', RUN_ID_HELP))
    .option(IGNORE_FLAG, ignoreBrokenHelp)
    .action(async (given: string, flags: CommonFlags & { ignoreBrokenSettings?: boolean }) => {
      const result = await withStore(flags, async (store) => {
        const id = await resolveId(store, 'run', given);
        const run = await store.getRun(id);
        if (!run) throw new RunNotFoundError(id);
        if (FINISHED_STATUSES.includes(run.status)) throw new RunFinishedError(id, run.status);
        const ask = await nextMessageAsk(store, run);
        if (!ask) {
          const what = run.pendingInteractionId ? `it waits for ${run.pendingInteractionId}: answer it with sage respond, or cancel the run` : 'it is still working: cancel it to stop it now';
          throw new UsageError(`Run ${id} is ${run.status}, not idle (${what}).`);
        }
        await refuseBrokenSettings(store, id, flags);
        // The next-message ask answered with nothing: the loop ends the run completed, wherever it is driven.
        return withRunner(store, async (runner) => {
          const answered = await runner.respond(ask.id, { kind: 'input', text: '', userId: defaultUser() });
          const handle = answered.delivered === 'resumed' ? answered.handle : runner.handle(id);
          const record = handle ? await driveToRest(runner, store, handle) : await store.getRun(id);
          return { id, delivered: answered.delivered, record: record ?? run };
        }, flags);
      }, runNotFound(given));
      const id = result.id;
      if (flags.json) return out(JSON.stringify({ runId: id, delivered: result.delivered, status: result.record.status, finalText: result.record.finalText }));
      if (result.delivered === 'notified') out(`run ${id}: close sent to the process that drives it`);
      else printRunEnd(result.record, false);
    });

  common(runs.command('recover').description('resume runs left running without a live owner, queued runs and answered ones; drive them to their next stop')).action(
    async (flags: CommonFlags) => {
      const results = await withStore(flags, (store) =>
        withRunner(store, async (runner) => {
          const { resumed, expired, left } = await runner.recover();
          const ended: RunRecord[] = [];
          for (const runId of resumed) {
            const handle = runner.handle(runId);
            ended.push(handle ? await driveToRest(runner, store, handle) : ((await store.getRun(runId)) as RunRecord));
          }
          return { ended, expired, left };
        }),
        () => ({ ended: [], expired: [], left: [] }),
      );
      // A run whose settings files do not load is left as it was (not failed, not resumed): say which and why.
      for (const left of results.left) process.stderr.write(`sage: ${left.message}\nFix the settings and run sage runs recover again, or sage runs resume ${left.runId} ${IGNORE_FLAG}.\n`);
      if (results.left.length) process.exitCode = 1;
      if (flags.json) return out(JSON.stringify({ runs: results.ended.map((r) => ({ runId: r.id, status: r.status, pendingInteractionId: r.pendingInteractionId })), expired: results.expired, left: results.left.map((l) => ({ runId: l.runId, reason: l.reason })) }));
      if (results.expired.length) out(`expired ${results.expired.length} request(s)`);
      if (results.ended.length === 0) return out(results.left.length ? 'nothing else to recover' : 'nothing to recover');
      for (const r of results.ended) printRunEnd(r, false);
    },
  );

  common(runs.command('prune').description('delete finished runs (and their events) last updated before a given age'))
    .requiredOption('--older-than <age>', 'e.g. 30d, 12h, 90m')
    .action(async (flags: CommonFlags & { olderThan: string }) => {
      const ms = parseAge(flags.olderThan);
      const result = await withStore(flags, (store) => store.prune({ olderThan: new Date(Date.now() - ms) }), () => ({ runs: 0, events: 0 }));
      if (flags.json) out(JSON.stringify(result));
      else out(`pruned ${result.runs} finished run(s) and ${result.events} event(s) older than ${flags.olderThan}`);
    });

  common(
    program
      .command('respond')
      .description(
        'answer a pending request of a durable run; the run then resumes in this process, ' +
          "or goes on in the process that drives it (an external agent's run)",
      )
      .argument('<interaction-id>', `the request id (sage interactions list --pending), or a start of it of at least ${MIN_ID_PREFIX} characters that names one request`),
  )
    .option('--allow', 'approve a permission request')
    .option('--deny', 'deny a permission request, or decline an MCP form')
    .option('--message <text>', 'with --deny: tell the agent why')
    .option('--text <text>', 'answer an input request')
    .option('--select <value...>', 'answer a select request')
    .option('--answer <key=value...>', 'answer a question: "Question=Label" (repeat for each question); or a form field (an MCP elicitation): "field=value" (yes/no for a yes/no field, repeat for several choices); fields not given get the form\'s default or stay empty when optional')
    .option('--user <id>', 'who answers (default: your user name)')
    .option(IGNORE_FLAG, ignoreBrokenHelp)
    .action(async (given: string, flags: RespondFlags & { ignoreBrokenSettings?: boolean }) => {
      answerFlag(flags);
      await withStore(flags, async (store) => {
        const interactionId = await resolveId(store, 'interaction', given);
        const stored = await store.getInteraction(interactionId);
        if (!stored) throw new InteractionNotFoundError(interactionId);
        const context = await askContextFor(store, stored);
        // A refusal names the request it is about in words, not only by id.
        const aboutIt = (error: unknown): unknown => {
          if (context && SageError.isInstance(error) && error instanceof Error) {
            error.message = `${error.message} (the request: ${askContextLine(context, { risk: true })})`;
          }
          return error;
        };
        let answer;
        try {
          answer = responseFromFlags(stored.request, flags);
        } catch (error) {
          throw aboutIt(error);
        }
        const body = { ...answer, userId: flags.user ?? defaultUser(), channel: 'cli' };
        // Before the answer is stored: a refused respond leaves the request pending, to answer once fixed.
        await refuseBrokenSettings(store, stored.runId, flags);
        await withRunner(store, async (runner) => {
          let result;
          try {
            result = await runner.respond(interactionId, body);
          } catch (error) {
            // The flags fit the kind but not this request (an unknown option, a missing answer).
            if (error instanceof InvalidResponseError) throw aboutIt(new UsageError(error.message));
            throw aboutIt(error);
          }
          const answeredBy = result.response.userId ?? body.userId;
          const answeredAt = result.response.respondedAt;
          if (!flags.json) out(`answered ${interactionId} as ${answeredBy} at ${answeredAt}`);
          const handle = result.delivered === 'resumed' ? result.handle : runner.handle(stored.runId);
          const run = handle ? await driveToRest(runner, store, handle, flags.json ? undefined : eventLinePrinter(false)) : await store.getRun(stored.runId);
          if (flags.json) {
            out(JSON.stringify({ interactionId, runId: stored.runId, answeredBy, answeredAt, delivered: result.delivered, status: run?.status, pendingInteractionId: run?.pendingInteractionId ?? null }));
          } else if (result.delivered === 'notified') {
            out(`run ${stored.runId}: answer handed to the process that drives it`);
          } else if (run) printRunEnd(run, false);
        }, flags);
      }, () => {
        throw new InteractionNotFoundError(given);
      });
    });

  const interactions = program.command('interactions').description('requests of durable runs (approvals, questions, inputs)');
  common(interactions.command('list').description('list requests, newest first, with the risk the gate judged each approval to carry (RISK column; risk in --json)'))
    .option('--pending', 'only those waiting for an answer')
    .option('--run <id>', `only this run (its id, or a start of it of at least ${MIN_ID_PREFIX} characters)`)
    .action(async (flags: CommonFlags & { pending?: boolean; run?: string }) => {
      const { list, contexts } = await withStore(flags, async (store) => {
        const runId = flags.run === undefined ? undefined : await runIdOrAsGiven(store, flags.run);
        const list = await store.listInteractions({
          ...(flags.pending ? { status: ['pending'] as const } : {}),
          ...(runId !== undefined ? { runId } : {}),
        });
        return { list, contexts: await contextsOf(store, list) };
      }, () => ({ list: [], contexts: new Map<string, AskContext>() }));
      if (flags.json) return out(JSON.stringify(list.map((i) => interactionView(i, contexts.get(i.id)))));
      if (list.length === 0) return out(flags.pending ? 'no pending requests' : 'no requests');
      const idWidth = Math.max(2, ...list.map((i) => i.id.length));
      out(`${'ID'.padEnd(idWidth)}  ${'STATUS'.padEnd(9)} ${'KIND'.padEnd(9)} ${'RISK'.padEnd(7)} REQUEST`);
      for (const i of list) {
        // Where it was answered (web, cli, a chat channel such as slack:T123), when the answer says.
        const via = (i.response as { channel?: unknown } | null)?.channel;
        const tail = i.status === 'pending' ? `answer: sage respond ${i.id} ${howToAnswer(i.request)}` : i.answeredBy ? `by ${i.answeredBy}${typeof via === 'string' ? ` in ${via}` : ''} at ${i.answeredAt}` : (i.reason ?? '');
        out(`${i.id.padEnd(idWidth)}  ${i.status.padEnd(9)} ${i.kind.padEnd(9)} ${(riskOf(i.request) ?? '-').padEnd(7)} ${oneLine(summarizeRequest(i.request), 80)}  ${tail}`);
        // Under each request, what it belongs to: the task, folder, asker and mode.
        const context = contexts.get(i.id);
        if (context) out(`${' '.repeat(idWidth + 2)}${askContextLine(context)}`);
      }
    });
}

