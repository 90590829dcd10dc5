/**
 * Subagent overhead (issue 16): what starting a subagent and returning its result costs on top of
 * the subagent's own steps, with the scripted model and the durable runner over in-memory SQLite.
 *
 *   npx tsx bench/subagents.ts [--n 200]
 *
 * Three runs, each measured n times (after a warm-up), each started with the factory's RunSpec and
 * driven to its end by one DurableRunner:
 *   - task:   the parent calls Task(Explore); the subagent reads a file and answers; the parent answers.
 *   - parent: the parent's own steps with a no-op read-only tool in Task's place (two turns, one call).
 *   - child:  the subagent's steps as a run of their own (a Read, then the answer).
 * overhead = task − parent − child: the child run's creation, its RunSpec and gate, the relay of its
 * events, and the result's way back. Goal: ≤ 1 ms (median). Prints BENCH_RESULT {json} last.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { DurableRunner } from '../src/durable/durable-runner.js';
import { createRunFactory, type RunFactory } from '../src/runtime/create-run.js';
import { openSqliteStore } from '../src/store/open-store.js';
import { builtinTools } from '../src/tool/builtin/index.js';
import { defineTool } from '../src/tool/types.js';

const i = process.argv.indexOf('--n');
const n = i >= 0 ? Number(process.argv[i + 1]) : 200;

const dir = mkdtempSync(join(tmpdir(), 'sage-bench-subagents-'));
writeFileSync(join(dir, 'notes.txt'), 'hello\n');
const read = { name: 'Read', input: { file_path: join(dir, 'notes.txt') } };
const scripts = {
  task: { turns: [{ toolCalls: [{ name: 'Task', input: { description: 'read', prompt: 'read the notes', subagent_type: 'Explore' } }] }, { text: 'done' }], agents: { Explore: { turns: [{ toolCalls: [read] }, { text: 'hello' }] } } },
  parent: { turns: [{ toolCalls: [{ name: 'Noop', input: {} }] }, { text: 'done' }] },
  child: { turns: [{ toolCalls: [read] }, { text: 'hello' }] },
};
const files = Object.fromEntries(Object.entries(scripts).map(([k, v]) => {
  const file = join(dir, `${k}.json`);
  writeFileSync(file, JSON.stringify(v));
  return [k, `scripted:${file}`];
})) as Record<keyof typeof scripts, string>;

const noop = defineTool({ name: 'Noop', description: 'does nothing', inputSchema: z.object({}), risk: 'LOW', readOnly: true, execute: async () => 'ok' });

const store = await openSqliteStore(':memory:');
const factory: RunFactory = createRunFactory({ store, home: dir, tools: () => [...builtinTools(), noop] });
const runner = await new DurableRunner({ store, runtime: factory, idleSuspendMs: 0 }).open();

async function once(kind: keyof typeof scripts): Promise<number> {
  const started = performance.now();
  const spec = await factory.runSpecInput('t', { surface: 'sdk', model: files[kind], cwd: dir, oneTask: true, mode: 'non-interactive', autoResponse: 'allow', ...(kind === 'child' ? { tools: ['Read', 'Glob', 'Grep', 'Bash'], permissionMode: 'plan' as const } : {}) });
  const handle = await runner.start('t', spec);
  const outcome = await handle.outcome;
  if (outcome.status !== 'completed') throw new Error(`${kind}: ${outcome.status} ${outcome.error?.message ?? ''}`);
  if (kind === 'task' && outcome.messages.find((m) => m.role === 'tool')?.content !== 'hello') throw new Error('task: the subagent\'s answer did not come back');
  return performance.now() - started;
}

const kinds = ['task', 'parent', 'child'] as const;
for (let w = 0; w < 20; w++) for (const k of kinds) await once(k);
const times: Record<(typeof kinds)[number], number[]> = { task: [], parent: [], child: [] };
// Interleaved, so a slow moment of the machine hits all three alike.
for (let r = 0; r < n; r++) for (const k of kinds) times[k].push(await once(k));
await runner.close();
await store.close();
rmSync(dir, { recursive: true, force: true });

const sorted = (a: number[]) => [...a].sort((x, y) => x - y);
const pct = (a: number[], p: number) => sorted(a)[Math.min(a.length - 1, Math.floor((p / 100) * a.length))]!;
const median = (a: number[]) => pct(a, 50);
const overheads = times.task.map((t, k) => t - times.parent[k]! - times.child[k]!);
const result = {
  n,
  loadavg1: Number(loadavg()[0]!.toFixed(2)),
  taskMedianMs: Number(median(times.task).toFixed(3)),
  taskP99Ms: Number(pct(times.task, 99).toFixed(3)),
  parentMedianMs: Number(median(times.parent).toFixed(3)),
  childMedianMs: Number(median(times.child).toFixed(3)),
  overheadMedianMs: Number((median(times.task) - median(times.parent) - median(times.child)).toFixed(3)),
  overheadPairedMedianMs: Number(median(overheads).toFixed(3)),
  overheadPairedP99Ms: Number(pct(overheads, 99).toFixed(3)),
  goalMs: 1,
};
console.log(`task (parent + Explore subagent): median ${result.taskMedianMs} ms, p99 ${result.taskP99Ms} ms`);
console.log(`parent steps alone: median ${result.parentMedianMs} ms; subagent steps alone: median ${result.childMedianMs} ms`);
console.log(`overhead of the subagent: ${result.overheadMedianMs} ms (medians), paired median ${result.overheadPairedMedianMs} ms, p99 ${result.overheadPairedP99Ms} ms; goal ≤ ${result.goalMs} ms; load ${result.loadavg1}`);
console.log(`BENCH_RESULT ${JSON.stringify(result)}`);
