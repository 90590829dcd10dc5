// bench/durable.ts peer: OpenAI Agents SDK, needsApproval tool; the RunState is serialised
// (state.toString()) into a better-sqlite3 table (WAL, UPSERT) at each interruption and restored
// with RunState.fromString() to approve and continue. synchronous is the table's (BENCH_SYNC).
//   BENCH_SYNC=full|normal node --expose-gc bench/peers/durable-openai-agents.mjs [--kill-child DB LOG ID]
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent, Runner, RunState, Usage, setTracingDisabled, tool } from '@openai/agents';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { CONCURRENCY, CycleMeter, durability, FSYNC_PASS, inFlight } from './durable-common.mjs';
import { decide, versionOf } from './harness.mjs';

setTracingDisabled(true);
const N = Number(process.env.BENCH_N ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = 30;

class MockModel {
  constructor(n) {
    this.n = n;
  }
  async getResponse(req) {
    const items = Array.isArray(req.input) ? req.input : [];
    let done = 0;
    for (const item of items) if (item.type === 'function_call_result') done++;
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    const d = decide(done, this.n);
    return d.kind === 'call'
      ? { usage, output: [{ type: 'function_call', id: `fc_${done}`, callId: d.id, name: 'echo', arguments: JSON.stringify(d.input), status: 'completed' }] }
      : { usage, output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: d.text }] }] };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('unused');
  }
}

function build(dbPath, n, log, killAfter) {
  const echo = tool({
    name: 'echo',
    description: 'echo',
    parameters: z.object({ i: z.number() }),
    needsApproval: true,
    execute: async ({ i }) => {
      if (log) appendFileSync(log, `${i}\n`);
      if (killAfter !== undefined && i === killAfter) process.kill(process.pid, 'SIGKILL');
      return `ok ${i}`;
    },
  });
  const agent = new Agent({ name: 'bench', instructions: 'x', model: new MockModel(n), tools: [echo] });
  const runner = new Runner({ tracingDisabled: true });
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability()}`);
  db.exec('CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, version INTEGER NOT NULL, state TEXT)');
  const put = db.prepare('INSERT INTO runs (id, version, state) VALUES (?, 1, ?) ON CONFLICT(id) DO UPDATE SET version = version + 1, state = excluded.state');
  const get = db.prepare('SELECT state FROM runs WHERE id = ?');
  const store = { put: (id, s) => put.run(id, s), get: (id) => get.get(id)?.state, db };
  return { agent, runner, store };
}

/** Starts a run and stores its state at the first interruption. */
async function start(h, id, n) {
  const r = await h.runner.run(h.agent, 'go', { maxTurns: n + 2 });
  h.store.put(id, r.state.toString());
  return r;
}

/** One cycle: load → deserialise → approve → run to the next interruption → persist. */
async function resumeOnce(h, id, approve = true) {
  const state = await RunState.fromString(h.agent, h.store.get(id));
  for (const i of state.getInterruptions()) (approve ? state.approve(i) : state.reject(i));
  const r = await h.runner.run(h.agent, state);
  h.store.put(id, r.state.toString());
  return r;
}

const print = (r) => process.stdout.write(`BENCH_RESULT ${JSON.stringify(r)}\n`);

async function drive(h, id, meter) {
  let r = await start(h, id, N);
  let cycles = 0;
  while (r.interruptions?.length) {
    const stop = meter?.start();
    r = await resumeOnce(h, id);
    stop?.();
    cycles++;
  }
  if (cycles !== N || r.finalOutput !== 'done') throw new Error(`openai: ${cycles} cycles, final ${JSON.stringify(r.finalOutput)}`);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'oa-durable-'));
  const h = build(join(dir, 'oa.db'), N);
  const meter = new CycleMeter();
  if (FSYNC_PASS) {
    for (let w = 0; w < 3; w++) await drive(h, `warm-${w}`);
    for (let r = 0; r < RUNS; r++) await drive(h, `seq-${r}`, meter);
    rmSync(dir, { recursive: true, force: true });
    print({ name: 'openai', cycles: meter.times.length });
    return;
  }
  for (let w = 0; w < WARMUP; w++) await drive(h, `warm-${w}`);
  globalThis.gc?.();
  const t0 = performance.now();
  for (let r = 0; r < RUNS; r++) await drive(h, `seq-${r}`, meter);
  const seqMs = performance.now() - t0;
  const concurrent = await inFlight(CONCURRENCY, Math.max(2, Math.ceil((RUNS * 2) / CONCURRENCY)), (m, id) => drive(h, id, m));
  // Bytes: the snapshot is overwritten at each interruption; what a cycle writes is its full length.
  const id = 'bytes';
  let r = await start(h, id, N);
  const sizes = [Buffer.byteLength(h.store.get(id))];
  while (r.interruptions?.length) {
    r = await resumeOnce(h, id);
    if (r.interruptions?.length) sizes.push(Buffer.byteLength(h.store.get(id)));
  }
  const probes = process.env.BENCH_PROBES === '0' ? {} : await runProbes(dir);
  rmSync(dir, { recursive: true, force: true });
  const seq = meter.summary();
  print({
    name: 'openai',
    label: `OpenAI Agents ${await versionOf('@openai/agents')} + RunState in better-sqlite3`,
    synchronous: durability(),
    ...seq,
    cyclesPerSec: seq.cycles / (seqMs / 1000),
    ...concurrent,
    firstBytes: sizes[0],
    lastBytes: sizes.at(-1),
    ...probes,
  });
}

async function runProbes(dir) {
  const n = 3;
  const log = join(dir, 'side.log');
  writeFileSync(log, '');
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const h = build(join(dir, 'probe.db'), n, log);
  const out = {};
  await start(h, 'probe', n);
  const staleState = h.store.get('probe');
  const settled = await Promise.allSettled([resumeOnce(h, 'probe'), resumeOnce(h, 'probe')]);
  const dbl = lines().filter((l) => l === '0').length;
  out.doubleResume = lines().filter((l) => l === '0').length === 1 && settled.some((s) => s.status === 'rejected');
  // Stale: the snapshot taken at approval 0, applied again after approval 1 is pending.
  const before = lines().length;
  const stale = await (async () => {
    const state = await RunState.fromString(h.agent, staleState);
    for (const i of state.getInterruptions()) state.approve(i);
    await h.runner.run(h.agent, state);
  })().then(() => 'accepted', (e) => e.message);
  out.staleAnswer = stale !== 'accepted' && lines().length === before;
  let r;
  do r = await resumeOnce(h, 'probe'); while (r.interruptions?.length);
  const done = lines().length;
  const late = await resumeOnce(h, 'probe').then(() => 'accepted', (e) => e.message);
  out.resumeAfterCompletion = late !== 'accepted' && lines().length === done;
  // kill -9 after the side effect, before the state is stored again.
  writeFileSync(log, '');
  const killDb = join(dir, 'kill.db');
  const k = build(killDb, n, log);
  await start(k, 'kill', n);
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--kill-child', killDb, log, 'kill'], { stdio: 'inherit' });
  const again = build(killDb, n, log);
  let kr = await resumeOnce(again, 'kill');
  while (kr.interruptions?.length) kr = await resumeOnce(again, 'kill');
  const zeroes = lines().filter((l) => l === '0').length;
  out.killBetweenExecutionAndPersistence = child.signal === 'SIGKILL' && zeroes === 1;
  out.notes = `double resume: call 0 ran ${dbl}×, ${settled.filter((x) => x.status === 'rejected').length} of 2 refused; after kill -9 call 0 ran ${zeroes}×; stale snapshot: ${stale === 'accepted' ? 'accepted (ran again)' : 'refused'}; resume after end: ${late === 'accepted' ? 'accepted' : 'refused'}`;
  return out;
}

const ki = process.argv.indexOf('--kill-child');
if (ki >= 0) {
  const [db, log, id] = process.argv.slice(ki + 1);
  const h = build(db, 3, log, 0);
  await resumeOnce(h, id);
  throw new Error('the child should have died');
} else {
  try {
    await main();
  } catch (error) {
    print({ name: 'openai', error: String(error?.message ?? error).slice(0, 200) });
  }
}
