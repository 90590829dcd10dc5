/**
 * A child process for the crash tests. It drives scenario runs in one store (answering their asks,
 * as a person would) and stops each one right after its Nth durable commit, then kills itself with
 * SIGKILL — no cleanup of any kind.
 *
 * Many boundaries per process: each case is its own run; when a case reaches its boundary, that
 * run is frozen there (every later store call of the run, and its tool, never returns), so nothing
 * of it after that commit reaches the store or the outside world. When every case is frozen the
 * process kills itself: on disk, each run is exactly where a kill -9 at its boundary leaves it.
 *
 *   node crash-driver.mjs '{"db":"/tmp/x/sage.db","dir":"/tmp/x","cases":[{"runId":"r1","crashAfter":7}]}'
 *   node crash-driver.mjs '{"url":"postgres://…","schema":"s1","dir":"/tmp/x","cases":[{"runId":"r1"}]}'
 *
 * Prints one JSON line at the end: { commits: { runId: n }, status: { runId: s }, frozen: { runId: kind } }.
 * A case without a crash point runs to the end, and the process then exits normally.
 */
import { join } from 'node:path';
import { openPostgresStore, openSqliteStore } from '../../store/open-store.js';
import { FINISHED_STATUSES, type Store } from '../../store/index.js';
import { DurableRunner } from '../durable-runner.js';
import { boundaryKind, BOUNDARY_METHODS, runOf } from './boundaries.js';
import { answerFor, caseLog, scenarioRuntime, type CrashCase } from './scenario.js';

interface DriverArgs {
  db?: string;
  url?: string;
  schema?: string;
  dir: string;
  cases?: CrashCase[];
  leaseMs?: number;
  /** Instance mode: run ids to start and hold. */
  hold?: string[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as DriverArgs;
// NORMAL in WAL mode: a commit survives the process being killed (what this test does); FULL adds
// only power-loss safety, at an fsync per commit.
const store: Store = args.url ? await openPostgresStore(args.url, { schema: args.schema, max: 4 }) : await openSqliteStore(args.db!, { synchronous: 'normal' });
const model = `scripted:${join(args.dir, 'script.json')}`;

if (args.hold) {
  // Instance mode: start runs, wait at their first asks holding the leases, until killed.
  const holder = new DurableRunner({ store, runtime: scenarioRuntime(join(args.dir, 'appended.log')), idleSuspendMs: 3_600_000, leaseMs: args.leaseMs ?? 300, instanceId: 'instance-a' });
  await holder.open();
  for (const id of args.hold) await holder.start('write four lines', { runId: id, model });
  for (;;) {
    const pending = await store.listInteractions({ status: ['pending'], limit: 1000 });
    if (args.hold.every((id) => pending.some((p) => p.runId === id))) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  process.stdout.write('ready\n');
  await new Promise(() => setInterval(() => {}, 1000));
}

const cases = new Map((args.cases ?? []).map((c) => [c.runId, c]));
const commits = new Map<string, number>();
const frozen = new Map<string, string>();
const onFrozen = new Map<string, () => void>();
const never = new Promise<never>(() => {});

function freeze(runId: string, kind: string): Promise<never> {
  frozen.set(runId, kind);
  onFrozen.get(runId)?.();
  return never;
}

for (const name of BOUNDARY_METHODS) {
  const original = (store[name as keyof Store] as (...a: unknown[]) => Promise<unknown>).bind(store);
  (store as unknown as Record<string, unknown>)[name] = async (...a: unknown[]) => {
    const runId = await runOf(store, name, a[0]);
    // Frozen: as if the process had died right after the boundary; nothing more of this run happens.
    if (runId && frozen.has(runId)) return never;
    const result = await original(...a);
    const kind = boundaryKind(name, a[0], a[1], result);
    if (kind && runId) {
      const n = (commits.get(runId) ?? 0) + 1;
      commits.set(runId, n);
      if (n === cases.get(runId)?.crashAfter) return freeze(runId, `${kind}`);
    }
    return result;
  };
}

const runtime = scenarioRuntime(
  (runId) => caseLog(args.dir, runId),
  async (runId, line) => {
    if (cases.get(runId)?.freezeAfterAppend === line) await freeze(runId, 'in-tool');
  },
);
const runner = new DurableRunner({ store, runtime, idleSuspendMs: 0, leaseMs: args.leaseMs ?? 300, flushDelayMs: 1 });

/** The person: answers each pending request until the run ends. Never recovers (no run here is orphaned). */
async function play(runId: string): Promise<void> {
  await (await runner.start('write four lines', { runId, model })).outcome;
  for (let round = 0; round < 60; round++) {
    for (let live = runner.handle(runId); live; live = runner.handle(runId)) await live.outcome;
    const run = await store.getRun(runId);
    if (!run || FINISHED_STATUSES.includes(run.status)) return;
    const pending = await store.listInteractions({ runId, status: ['pending'] });
    if (pending.length === 0) throw new Error(`run ${runId} is ${run.status} with nothing pending`);
    for (const interaction of pending) await runner.respond(interaction.id, answerFor(interaction));
  }
  throw new Error(`run ${runId} did not finish`);
}

await Promise.all(
  [...cases.keys()].map((runId) =>
    Promise.race([play(runId), new Promise<void>((r) => onFrozen.set(runId, r))]).catch((error: unknown) => {
      process.stderr.write(`${runId}: ${(error as Error).stack ?? String(error)}\n`);
    }),
  ),
);
const status: Record<string, string | undefined> = {};
for (const runId of cases.keys()) if (!frozen.has(runId)) status[runId] = (await store.getRun(runId))?.status;
process.stdout.write(`${JSON.stringify({ commits: Object.fromEntries(commits), status, frozen: Object.fromEntries(frozen) })}\n`);
if (frozen.size > 0) process.kill(process.pid, 'SIGKILL');
await runner.close({ suspend: false });
await store.close();
