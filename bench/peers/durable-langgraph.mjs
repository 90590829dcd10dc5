// bench/durable.ts peer: LangGraph.js, interrupt() inside the tool + SqliteSaver, resumed with
// Command({ resume }). Same mock (counts tool results) as every runtime. Prints BENCH_RESULT lines.
// The saver gets its own better-sqlite3 connection with synchronous set to the table's (BENCH_SYNC);
// SqliteSaver.fromConnString would leave SQLite's default and only switch the file to WAL.
//   BENCH_SYNC=full|normal node --expose-gc bench/peers/durable-langgraph.mjs [--kill-child DB LOG THREAD]
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { CONCURRENCY, CycleMeter, durability, FSYNC_PASS, inFlight } from './durable-common.mjs';
import { decide, versionOf } from './harness.mjs';

const N = Number(process.env.BENCH_N ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = 30;

class MockChat extends BaseChatModel {
  constructor(n) {
    super({});
    this.n = n;
  }
  _llmType() {
    return 'mock';
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    const done = messages.filter((m) => m._getType() === 'tool').length;
    const d = decide(done, this.n);
    const message = d.kind === 'call' ? new AIMessage({ content: '', tool_calls: [{ id: d.id, name: 'echo', args: d.input, type: 'tool_call' }] }) : new AIMessage({ content: d.text });
    return { generations: [{ text: '', message }] };
  }
}

function build(dbPath, n, log, killAfter) {
  const model = new MockChat(n);
  const echo = tool(
    async ({ i }) => {
      const approved = interrupt({ type: 'confirm', args: { i } });
      if (!approved) return 'denied';
      if (log) appendFileSync(log, `${i}\n`);
      if (killAfter !== undefined && i === killAfter) process.kill(process.pid, 'SIGKILL');
      return `ok ${i}`;
    },
    { name: 'echo', description: 'echo', schema: z.object({ i: z.number() }) },
  );
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability()}`);
  const saver = new SqliteSaver(db);
  const app = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (s) => ({ messages: [await model.invoke(s.messages)] }))
    .addNode('tools', new ToolNode([echo]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });
  return { app, saver };
}

const print = (r) => process.stdout.write(`BENCH_RESULT ${JSON.stringify(r)}\n`);

async function drive(app, thread, meter) {
  const cfg = { configurable: { thread_id: thread } };
  let r = await app.invoke({ messages: [{ role: 'user', content: 'go' }] }, cfg);
  let cycles = 0;
  while (r.__interrupt__?.length) {
    const stop = meter?.start();
    r = await app.invoke(new Command({ resume: true }), cfg);
    stop?.();
    cycles++;
  }
  const last = r.messages.at(-1);
  if (cycles !== N || last.content !== 'done') throw new Error(`langgraph: ${cycles} cycles, last ${JSON.stringify(last.content)}`);
}

function threadBytes(dbPath, thread) {
  const db = new Database(dbPath, { readonly: true });
  const cp = db.prepare('SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) AS b FROM checkpoints WHERE thread_id = ?').get(thread).b;
  const w = db.prepare('SELECT coalesce(sum(length(value)), 0) AS b FROM writes WHERE thread_id = ?').get(thread).b;
  db.close();
  return cp + w;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'lg-durable-'));
  const dbPath = join(dir, 'lg.db');
  const { app } = build(dbPath, N);
  const meter = new CycleMeter();
  if (FSYNC_PASS) {
    for (let w = 0; w < 3; w++) await drive(app, `warm-${w}`);
    for (let r = 0; r < RUNS; r++) await drive(app, `seq-${r}`, meter);
    rmSync(dir, { recursive: true, force: true });
    print({ name: 'langgraph', cycles: meter.times.length });
    return;
  }
  for (let w = 0; w < WARMUP; w++) await drive(app, `warm-${w}`);
  globalThis.gc?.();
  const t0 = performance.now();
  for (let r = 0; r < RUNS; r++) await drive(app, `seq-${r}`, meter);
  const seqMs = performance.now() - t0;
  const concurrent = await inFlight(CONCURRENCY, Math.max(2, Math.ceil((RUNS * 2) / CONCURRENCY)), (m, id) => drive(app, id, m));
  // Bytes after each suspension of one run.
  const thread = 'bytes';
  const cfg = { configurable: { thread_id: thread } };
  let r = await app.invoke({ messages: [{ role: 'user', content: 'go' }] }, cfg);
  const sizes = [threadBytes(dbPath, thread)];
  while (r.__interrupt__?.length) {
    r = await app.invoke(new Command({ resume: true }), cfg);
    sizes.push(threadBytes(dbPath, thread));
  }
  const deltas = sizes.slice(1).map((s, i) => s - sizes[i]);
  const probes = process.env.BENCH_PROBES === '0' ? {} : await runProbes(dir);
  rmSync(dir, { recursive: true, force: true });
  const seq = meter.summary();
  print({
    name: 'langgraph',
    label: `LangGraph ${await versionOf('@langchain/langgraph')} + SqliteSaver`,
    synchronous: durability(),
    ...seq,
    cyclesPerSec: seq.cycles / (seqMs / 1000),
    ...concurrent,
    firstBytes: deltas[0],
    lastBytes: deltas.at(-2),
    totalRunBytes: sizes.at(-1),
    ...probes,
  });
}

async function runProbes(dir) {
  const n = 3;
  const dbPath = join(dir, 'probe.db');
  const log = join(dir, 'side.log');
  writeFileSync(log, '');
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const { app } = build(dbPath, n, log);
  const { app: other } = build(dbPath, n, log);
  const out = {};
  const cfg = { configurable: { thread_id: 'probe' } };
  await app.invoke({ messages: [{ role: 'user', content: 'go' }] }, cfg);
  // Concurrent double resume, from two compiled graphs on the same checkpointer file.
  const settled = await Promise.allSettled([app.invoke(new Command({ resume: true }), cfg), other.invoke(new Command({ resume: true }), cfg)]);
  const dbl = lines().filter((l) => l === '0').length;
  out.doubleResume = lines().filter((l) => l === '0').length === 1 && settled.some((s) => s.status === 'rejected');
  // A stale answer: LangGraph matches resumes by position, not id; a "no" meant for approval 0 is
  // applied to whatever is pending now. Passes only if it is refused.
  const stale = await app.invoke(new Command({ resume: false }), cfg).then(() => 'accepted', (e) => e.message);
  out.staleAnswer = stale !== 'accepted';
  // Resume after completion: drive to the end, then resume again.
  let r = await app.invoke(new Command({ resume: true }), cfg);
  while (r.__interrupt__?.length) r = await app.invoke(new Command({ resume: true }), cfg);
  const before = lines().length;
  const late = await app.invoke(new Command({ resume: true }), cfg).then(() => 'accepted', (e) => e.message);
  out.resumeAfterCompletion = late !== 'accepted' && lines().length === before;
  // kill -9 right after the side effect, before LangGraph persists the tool node's result.
  writeFileSync(log, '');
  const killDb = join(dir, 'kill.db');
  const first = build(killDb, n, log);
  const kcfg = { configurable: { thread_id: 'kill' } };
  await first.app.invoke({ messages: [{ role: 'user', content: 'go' }] }, kcfg);
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--kill-child', killDb, log, 'kill'], { stdio: 'inherit' });
  const { app: again } = build(killDb, n, log);
  let k = await again.invoke(new Command({ resume: true }), kcfg);
  while (k.__interrupt__?.length) k = await again.invoke(new Command({ resume: true }), kcfg);
  out.killBetweenExecutionAndPersistence = child.signal === 'SIGKILL' && lines().filter((l) => l === '0').length === 1;
  out.notes = `double resume: call 0 ran ${dbl}×, ${settled.filter((x) => x.status === 'rejected').length} of 2 refused; after kill -9 the side effect of call 0 ran ${lines().filter((l) => l === '0').length}×; stale answer: ${stale === 'accepted' ? 'applied to the newer interrupt' : 'refused'}; resume after end: ${late === 'accepted' ? 'accepted' : 'refused'}`;
  return out;
}

const k = process.argv.indexOf('--kill-child');
if (k >= 0) {
  const [db, log, thread] = process.argv.slice(k + 1);
  const { app } = build(db, 3, log, 0);
  await app.invoke(new Command({ resume: true }), { configurable: { thread_id: thread } });
  throw new Error('the child should have died');
} else {
  try {
    await main();
  } catch (error) {
    print({ name: 'langgraph', error: String(error?.message ?? error).slice(0, 200) });
  }
}
