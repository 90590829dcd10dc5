// bench/durable.ts peer: Mastra, a requireApproval tool and LibSQL storage (a fresh file), driven
// with agent.generate() and resumed with approveToolCallGenerate({ runId, toolCallId }).
//   BENCH_SYNC=full|normal node --expose-gc bench/peers/durable-mastra.mjs [--kill-child DB LOG RUNID TOOLCALLID]
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { LibSQLStore } from '@mastra/libsql';
import { z } from 'zod';
import { CONCURRENCY, CycleMeter, durability, FSYNC_PASS, inFlight } from './durable-common.mjs';
import { decide, versionOf } from './harness.mjs';

/**
 * LibSQLStore sends "PRAGMA synchronous=NORMAL" once, so it holds on the one pooled connection that
 * ran it, while every other connection @libsql/client opens for the same file (a transaction
 * borrows its own) keeps SQLite's default, FULL. For a table at one durability, every libsql
 * connection this process opens is set to the table's level before its first statement, and the
 * store's own synchronous pragma is replaced by it. The fsync counts in bench/durable.ts show the
 * result.
 */
function pinSynchronous(level) {
  const Database = createRequire(import.meta.url)('libsql');
  const { prepare, exec } = Database.prototype;
  const pinned = new WeakSet();
  const pin = (db) => {
    if (pinned.has(db)) return;
    pinned.add(db);
    exec.call(db, `PRAGMA synchronous = ${level}`);
  };
  Database.prototype.prepare = function (sql) {
    pin(this);
    return prepare.call(this, /^\s*PRAGMA\s+synchronous\s*=/i.test(sql) ? `PRAGMA synchronous = ${level}` : sql);
  };
  Database.prototype.exec = function (sql) {
    pin(this);
    return exec.call(this, sql);
  };
}
pinSynchronous(durability());

const N = Number(process.env.BENCH_N ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = 10;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

function countDone(prompt) {
  let done = 0;
  for (const m of prompt) if (m.role === 'tool') for (const p of m.content) if (p.type === 'tool-result') done++;
  return done;
}

function mockModel(n) {
  return {
    specificationVersion: 'v3',
    provider: 'mock',
    modelId: 'mock',
    supportedUrls: {},
    async doGenerate({ prompt }) {
      const d = decide(countDone(prompt), n);
      return d.kind === 'call'
        ? { content: [{ type: 'tool-call', toolCallId: d.id, toolName: 'echo', input: JSON.stringify(d.input) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
        : { content: [{ type: 'text', text: d.text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
    async doStream({ prompt }) {
      const d = decide(countDone(prompt), n);
      const parts =
        d.kind === 'call'
          ? [{ type: 'stream-start', warnings: [] }, { type: 'tool-call', toolCallId: d.id, toolName: 'echo', input: JSON.stringify(d.input) }, { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage }]
          : [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: d.text }, { type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage }];
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}

function build(dbPath, n, log, killAfter) {
  const echo = createTool({
    id: 'echo',
    description: 'echo',
    inputSchema: z.object({ i: z.number() }),
    requireApproval: true,
    execute: async (input) => {
      const i = input?.i ?? input?.context?.i;
      if (log) appendFileSync(log, `${i}\n`);
      if (killAfter !== undefined && i === killAfter) process.kill(process.pid, 'SIGKILL');
      return `ok ${i}`;
    },
  });
  const agent = new Agent({ id: 'bench', name: 'bench', instructions: 'x', model: mockModel(n), tools: { echo } });
  const mastra = new Mastra({ agents: { bench: agent }, storage: new LibSQLStore({ id: 'bench', url: `file:${dbPath}` }), logger: false });
  return mastra.getAgent('bench');
}

const print = (r) => process.stdout.write(`BENCH_RESULT ${JSON.stringify(r)}\n`);
const approve = (a, r) => a.approveToolCallGenerate({ runId: r.runId, toolCallId: r.suspendPayload?.toolCallId });

async function drive(a, n, meter) {
  let r = await a.generate('go', { maxSteps: n + 2 });
  let cycles = 0;
  while (r.finishReason === 'suspended') {
    const stop = meter?.start();
    r = await approve(a, r);
    stop?.();
    cycles++;
  }
  if (cycles !== n || r.text !== 'done') throw new Error(`mastra: ${cycles} cycles, text ${JSON.stringify(r.text)}, finish ${r.finishReason}`);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'mastra-durable-'));
  const a = build(join(dir, 'm.db'), N);
  const meter = new CycleMeter();
  if (FSYNC_PASS) {
    for (let w = 0; w < 3; w++) await drive(a, N);
    for (let r = 0; r < RUNS; r++) await drive(a, N, meter);
    rmSync(dir, { recursive: true, force: true });
    print({ name: 'mastra', cycles: meter.times.length });
    return;
  }
  for (let w = 0; w < WARMUP; w++) await drive(a, N);
  globalThis.gc?.();
  const t0 = performance.now();
  for (let r = 0; r < RUNS; r++) await drive(a, N, meter);
  const seqMs = performance.now() - t0;
  const concurrent = await inFlight(CONCURRENCY, Math.max(2, Math.ceil((RUNS * 2) / CONCURRENCY)), (m) => drive(a, N, m));
  const probes = process.env.BENCH_PROBES === '0' ? {} : await runProbes(dir).catch((e) => ({ notes: `probes failed: ${String(e?.message ?? e).slice(0, 160)}` }));
  rmSync(dir, { recursive: true, force: true });
  const seq = meter.summary();
  print({
    name: 'mastra',
    label: `Mastra ${await versionOf('@mastra/core')} + LibSQL`,
    synchronous: durability(),
    ...seq,
    cyclesPerSec: seq.cycles / (seqMs / 1000),
    ...concurrent,
    ...probes,
  });
}

async function runProbes(dir) {
  const n = 3;
  const log = join(dir, 'side.log');
  writeFileSync(log, '');
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const a = build(join(dir, 'probe.db'), n, log);
  const out = {};
  const first = await a.generate('go', { maxSteps: n + 2 });
  const settled = await Promise.allSettled([approve(a, first), approve(a, first)]);
  const dbl = lines().filter((l) => l === '0').length;
  out.doubleResume = lines().filter((l) => l === '0').length === 1 && settled.some((s) => s.status === 'rejected' || s.value?.error);
  const next = settled.find((s) => s.status === 'fulfilled' && s.value?.finishReason === 'suspended')?.value;
  const before = lines().length;
  const stale = await approve(a, first).then((r) => (r?.error ? r.error.message ?? 'error' : 'accepted'), (e) => e.message);
  out.staleAnswer = stale !== 'accepted' && lines().length === before;
  let r = next;
  while (r?.finishReason === 'suspended') r = await approve(a, r);
  const done = lines().length;
  const late = await approve(a, first).then((x) => (x?.error ? 'error' : 'accepted'), (e) => e.message);
  out.resumeAfterCompletion = late !== 'accepted' && lines().length === done;
  // kill -9 right after the side effect.
  writeFileSync(log, '');
  const killDb = join(dir, 'kill.db');
  const k = build(killDb, n, log);
  const s = await k.generate('go', { maxSteps: n + 2 });
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--kill-child', killDb, log, s.runId, s.suspendPayload?.toolCallId ?? ''], { stdio: 'inherit' });
  const again = build(killDb, n, log);
  const after = await approve(again, s).then((x) => (x?.error ? 'error' : x.finishReason), (e) => `error: ${e.message}`);
  const zeroes = lines().filter((l) => l === '0').length;
  out.killBetweenExecutionAndPersistence = child.signal === 'SIGKILL' && zeroes === 1;
  out.notes = `double resume: call 0 ran ${dbl}×, ${settled.filter((x) => x.status === 'rejected').length} of 2 refused; after kill -9 call 0 ran ${zeroes}× (re-approve: ${String(after).slice(0, 60)}); stale approval: ${stale === 'accepted' ? 'accepted' : 'refused'}; approval after end: ${late === 'accepted' ? 'accepted' : 'refused'}`;
  return out;
}

const ki = process.argv.indexOf('--kill-child');
if (ki >= 0) {
  const [db, log, runId, toolCallId] = process.argv.slice(ki + 1);
  const a = build(db, 3, log, 0);
  await a.approveToolCallGenerate({ runId, toolCallId });
  throw new Error('the child should have died');
} else {
  try {
    await main();
  } catch (error) {
    print({ name: 'mastra', error: String(error?.message ?? error).slice(0, 200) });
  }
}
