/**
 * A child process for the crash tests: drives the scenario run (answering its own asks, as a
 * person would) and kills itself with SIGKILL right after its Nth durable commit — a kill -9 at
 * exactly that checkpoint boundary, with no cleanup of any kind.
 *
 *   node --import tsx crash-driver.ts '{"db":"/tmp/x/sage.db","dir":"/tmp/x","runId":"r1","crashAfter":7}'
 *   node --import tsx crash-driver.ts '{"url":"postgres://…","schema":"s1","dir":"/tmp/x","runId":"r1"}'
 *
 * Prints one JSON line at the end when it was not killed: { commits, status }.
 */
import { join } from 'node:path';
import { openPostgresStore, openSqliteStore } from '../../store/open-store.js';
import type { Store } from '../../store/index.js';
import { DurableRunner } from '../durable-runner.js';
import { driveToEnd } from './drive-to-end.js';
import { scenarioRuntime } from './scenario.js';

interface DriverArgs {
  db?: string;
  url?: string;
  schema?: string;
  dir: string;
  runId: string;
  crashAfter?: number;
  leaseMs?: number;
  /** Instance mode: run ids to start and hold. */
  hold?: string[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as DriverArgs;
// NORMAL in WAL mode: a commit survives the process being killed (what this test does); FULL adds
// only power-loss safety, at an fsync per commit.
const store: Store = args.url ? await openPostgresStore(args.url, { schema: args.schema, max: 2 }) : await openSqliteStore(args.db!, { synchronous: 'normal' });

// Count the commits that are boundaries of the run's durable state.
let commits = 0;
// Boundaries: a checkpoint, a tool intent, a request committed, an answer claimed, a run claimed or
// released. Event-only flushes in between are not boundaries of the run's state.
const boundary: Record<string, (arg: unknown) => boolean> = {
  write: (w) => {
    const write = w as { checkpoint?: unknown; toolIntent?: unknown; run?: unknown; interruptedToolCalls?: unknown };
    return Boolean(write.checkpoint || write.toolIntent || write.run || write.interruptedToolCalls);
  },
  saveInteraction: () => true,
  claimAnswer: () => true,
  claimRun: () => true,
  claimOrphans: () => true,
};
for (const [name, counts] of Object.entries(boundary)) {
  const original = (store[name as keyof Store] as (...a: unknown[]) => Promise<unknown>).bind(store);
  (store as unknown as Record<string, unknown>)[name] = async (...a: unknown[]) => {
    const result = await original(...a);
    if (counts(a[0]) && ++commits === args.crashAfter) process.kill(process.pid, 'SIGKILL');
    return result;
  };
}

const runtime = scenarioRuntime(join(args.dir, 'appended.log'));
if (args.hold) {
  // Instance mode: start runs, wait at their first asks holding the leases, until killed.
  const holder = new DurableRunner({ store, runtime, idleSuspendMs: 3_600_000, leaseMs: args.leaseMs ?? 300, instanceId: 'instance-a' });
  await holder.open();
  for (const id of args.hold) await holder.start('write four lines', { runId: id, model: `scripted:${join(args.dir, 'script.json')}` });
  for (;;) {
    const pending = await store.listInteractions({ status: ['pending'], limit: 1000 });
    if (args.hold.every((id) => pending.some((p) => p.runId === id))) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  process.stdout.write('ready\n');
  await new Promise(() => setInterval(() => {}, 1000));
}
const runner = new DurableRunner({ store, runtime, idleSuspendMs: 0, leaseMs: args.leaseMs ?? 300, flushDelayMs: 1 });
const existing = await store.getRun(args.runId);
if (!existing) await (await runner.start('write four lines', { runId: args.runId, model: `scripted:${join(args.dir, 'script.json')}` })).outcome;
await driveToEnd(runner, store, args.runId);
const run = await store.getRun(args.runId);
await runner.close({ suspend: false });
await store.close();
process.stdout.write(`${JSON.stringify({ commits, status: run?.status })}\n`);
