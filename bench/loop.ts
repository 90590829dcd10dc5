/**
 * Loop benchmark (issue 2): the cost of Sage's agent loop per step, against a hand-rolled floor and
 * three peers (AI SDK, OpenAI Agents SDK, LangGraph.js) doing the same work: a mock model that
 * emits one `echo({ i })` call per turn for N turns (deciding from the prompt, by counting the tool
 * results in it) and then the text "done", and a pure Zod-validated tool.
 *
 *   npx tsx bench/loop.ts [--processes 3] [--steps 10000] [--n 10] [--warmup 30] [--only sage|peers|NAME,...]
 *
 * Every configuration runs in its own process (node --expose-gc): warm-up runs, then runs of N + 1
 * steps until `--steps` steps are timed. Processes run round robin across the configurations. The
 * table shows the median over the processes, with min–max.
 * The peers live in bench/peers with their own package.json (npm install --prefix bench/peers).
 * See bench/README.md for the method.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execSync } from 'node:child_process';
import { z } from 'zod';
import { run } from '../src/loop/index.js';
import type { Model, ModelRequest, ModelStreamPart } from '../src/model/types.js';
import { ScriptedModel } from '../src/model/scripted-model.js';
import { allowAllGate, minimalGate } from '../src/permission/minimal-gate.js';
import type { Tool } from '../src/tool/types.js';
// Plain JS, no dependencies: the same warm-up, timing and mock decision as the peers.
import { decide, measure, settings } from './peers/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const peersDir = join(here, 'peers');

// ---------------------------------------------------------------------------------------------
// Workers: one configuration each, run in a child process.

/** The peers' mock, as a Sage Model: counts the tool results in the prompt. */
class CountingModel implements Model {
  readonly specificationVersion = 'sage.model.v1' as const;
  readonly id = 'bench:counting';
  constructor(private readonly n: number) {}
  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    let done = 0;
    for (const m of request.messages) if (m.role === 'tool') done++;
    const d = decide(done, this.n);
    if (d.kind === 'call') {
      yield { type: 'tool-call', call: { id: d.id, name: 'echo', input: d.input } };
      yield { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } };
    } else {
      yield { type: 'text-delta', text: d.text };
      yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
    }
  }
}

const echoSchema = z.object({ i: z.number() });
const echo: Tool<{ i: number }> = {
  name: 'echo',
  description: 'echo',
  inputSchema: echoSchema,
  risk: 'LOW',
  readOnly: false, // so the minimal gate asks for it in the approval variant
  execute: async ({ i }) => `ok ${i}`,
};

function scriptFor(n: number): ScriptedModel {
  const turns = [];
  for (let i = 0; i < n; i++) turns.push({ toolCalls: [{ name: 'echo', input: { i }, id: `call_${i}` }] });
  turns.push({ text: 'done' });
  return new ScriptedModel({ turns });
}

async function sageRun(model: Model, approvals: boolean): Promise<number> {
  const r = run('go', {
    model,
    tools: [echo],
    gate: approvals ? minimalGate : allowAllGate,
    mode: { type: 'non-interactive', autoResponse: 'allow' },
    maxSteps: 1_000_000,
  });
  let asked = 0;
  for await (const e of r) if (e.type === 'interaction.requested') asked++;
  const o = await r.outcome;
  if (o.status !== 'completed' || o.finalText !== 'done') throw new Error(`sage: ${o.status} ${JSON.stringify(o.finalText)} ${o.error?.message ?? ''}`);
  if (approvals && asked !== o.stats.toolCalls) throw new Error(`sage: ${asked} approvals for ${o.stats.toolCalls} tool calls`);
  return o.stats.steps;
}

type Msg = { role: 'user' | 'assistant' | 'tool'; content: string; call?: { id: string; name: string; input: unknown } };

/** The floor: the same mock decision, a messages array and a Zod-validated tool, nothing else. */
async function floorRun(n: number): Promise<number> {
  const messages: Msg[] = [{ role: 'user', content: 'go' }];
  let steps = 0;
  for (;;) {
    steps++;
    let done = 0;
    for (const m of messages) if (m.role === 'tool') done++;
    const d = decide(done, n);
    if (d.kind === 'text') {
      messages.push({ role: 'assistant', content: d.text });
      return steps;
    }
    const call = { id: d.id, name: 'echo', input: d.input };
    messages.push({ role: 'assistant', content: '', call });
    const input = echoSchema.parse(call.input);
    messages.push({ role: 'tool', content: await echo.execute(input, undefined as never) as string });
  }
}

/**
 * The same run, durable: a DurableRunner over a SQLite file (synchronous FULL, the default) records
 * every step (events, checkpoint, tool intent and result) as `sage run` does. One runner per process.
 */
let durable: Promise<{ runner: import('../src/durable/durable-runner.js').DurableRunner }> | undefined;
async function durableRun(n: number, flushDelayMs?: number, synchronous: 'full' | 'normal' = 'full', readOnly = false): Promise<number> {
  durable ??= (async () => {
    const [{ mkdtempSync }, { tmpdir }, { openSqliteStore }, { DurableRunner }] = await Promise.all([
      import('node:fs'),
      import('node:os'),
      import('../src/store/open-store.js'),
      import('../src/durable/durable-runner.js'),
    ]);
    const store = await openSqliteStore(join(mkdtempSync(join(tmpdir(), 'sage-bench-durable-')), 'sage.db'), { synchronous });
    const runner = new DurableRunner({ store, runtime: { createModel: () => new CountingModel(n), tools: [readOnly ? { ...echo, readOnly: true } : echo], createGate: () => allowAllGate }, ...(flushDelayMs !== undefined ? { flushDelayMs } : {}) });
    await runner.open();
    return { runner };
  })();
  const { runner } = await durable;
  const handle = await runner.start('go', { model: 'bench:counting', mode: 'non-interactive', autoResponse: 'allow', maxSteps: 1_000_000 });
  const o = await handle.outcome;
  if (o.status !== 'completed' || o.finalText !== 'done') throw new Error(`sage-durable: ${o.status} ${JSON.stringify(o.finalText)} ${o.error?.message ?? ''}`);
  return o.stats.steps;
}

const sageConfigs: Record<string, { label: string; run: (n: number) => Promise<number> }> = {
  floor: { label: 'hand-rolled floor (array + zod)', run: (n) => floorRun(n) },
  sage: { label: 'Sage run() (counting model, allow-all gate)', run: (n) => sageRun(new CountingModel(n), false) },
  'sage-scripted': { label: 'Sage run() (ScriptedModel)', run: (n) => sageRun(scriptFor(n), false) },
  'sage-approvals': { label: 'Sage, every call asks, auto-responder allows', run: (n) => sageRun(new CountingModel(n), true) },
  'sage-durable': { label: 'Sage durable (DurableRunner, SQLite FULL, default 20 ms event flush)', run: (n) => durableRun(n) },
  'sage-durable-flush0': { label: 'Sage durable (DurableRunner, SQLite FULL, events flushed at once)', run: (n) => durableRun(n, 0) },
  'sage-durable-readonly': { label: 'Sage durable, SQLite FULL, a read-only tool (no intent commit before it)', run: (n) => durableRun(n, undefined, 'full', true) },
  'sage-durable-normal': { label: 'Sage durable (DurableRunner, SQLite NORMAL: no fsync per commit)', run: (n) => durableRun(n, undefined, 'normal') },
};

async function worker(name: string): Promise<void> {
  const config = sageConfigs[name];
  if (!config) throw new Error(`unknown configuration ${name}`);
  const { n } = settings();
  await measure(name, () => config.run(n));
}

// ---------------------------------------------------------------------------------------------
// The parent: spawns the processes and prints the table.

interface Result { name: string; usPerStep: number; cpuUsPerStep: number; steps: number; runs: number; version?: string }
interface Config { name: string; label: string; peer: boolean; warmup?: number; command: string[] }

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

function spawnOne(config: Config, env: Record<string, string>): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, config.command, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (code !== 0 || !line) reject(new Error(`${config.name} exited ${code}: ${(err || out).trim().split('\n').slice(-5).join('\n')}`));
      else resolve(JSON.parse(line.slice('BENCH_RESULT '.length)) as Result);
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const fmt = (us: number): string => (us >= 100 ? us.toFixed(0) : us >= 10 ? us.toFixed(1) : us.toFixed(2));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w, c) => (c === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

async function parent(): Promise<void> {
  const processes = Number(arg('processes', '3'));
  const steps = arg('steps', '10000');
  const n = arg('n', '10');
  const warmup = arg('warmup', '30');
  const only = arg('only', '');
  const selected = (name: string, peer: boolean) =>
    !only || only.split(',').some((o) => o === name || (o === 'sage' && !peer) || (o === 'peers' && peer));

  const self = fileURLToPath(import.meta.url);
  const configs: Config[] = Object.entries(sageConfigs).map(([name, c]) => ({
    name,
    label: c.label,
    peer: false,
    command: ['--expose-gc', '--import', 'tsx', self, '--worker', name],
  }));
  const peersInstalled = existsSync(join(peersDir, 'node_modules', 'ai')) && existsSync(join(peersDir, 'node_modules', '@openai', 'agents')) && existsSync(join(peersDir, 'node_modules', '@langchain', 'langgraph'));
  const peers: Config[] = [
    { name: 'ai-sdk', label: 'AI SDK generateText (MockLanguageModelV3)', peer: true, command: ['--expose-gc', join(peersDir, 'ai-sdk.mjs')] },
    { name: 'openai-agents', label: 'OpenAI Agents SDK Runner.run (custom Model)', peer: true, command: ['--expose-gc', join(peersDir, 'openai-agents.mjs')] },
    // LangGraph's JIT warm-up is long (hitl-anchors §7.1): at least 100 warm-up runs.
    { name: 'langgraph', label: 'LangGraph.js StateGraph + ToolNode', peer: true, warmup: Math.max(100, Number(warmup)), command: ['--expose-gc', join(peersDir, 'langgraph.mjs')] },
  ];
  if (peersInstalled) configs.push(...peers);

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const load = () => execSync('uptime', { encoding: 'utf8' }).trim();
  console.log(`Loop benchmark: N = ${n} tool turns + 1 final turn per run, ${steps} timed steps per process, ${processes} process(es) per configuration, warm-up ${warmup} runs.`);
  console.log(`Node ${process.version}, ${cpus().length} × ${cpu}`);
  console.log(`load before: ${load()}`);
  if (!peersInstalled) {
    console.log('\nThe peers are not installed, so only Sage is measured. To compare with the AI SDK, the OpenAI Agents SDK and LangGraph.js:\n  npm install --prefix bench/peers\n');
  }

  const results = new Map<string, { label: string; peer: boolean; values: number[]; cpu: number[]; version?: string; error?: string }>();
  const chosen = configs.filter((c) => selected(c.name, c.peer));
  for (const config of chosen) results.set(config.name, { label: config.label, peer: config.peer, values: [], cpu: [] });
  let failed = false;
  // Round robin (every configuration once, then again): a change of load on this shared machine then
  // falls on every configuration alike instead of on whichever ran during it.
  for (let p = 0; p < processes; p++) {
    for (const config of chosen) {
      const entry = results.get(config.name)!;
      if (entry.error) continue;
      try {
        const r = await spawnOne(config, { BENCH_N: n, BENCH_STEPS: steps, BENCH_WARMUP: String(config.warmup ?? warmup) });
        entry.values.push(r.usPerStep);
        entry.cpu.push(r.cpuUsPerStep);
        entry.version = r.version;
        process.stdout.write(`  ${config.name} process ${p + 1}/${processes}: ${fmt(r.usPerStep)} µs/step wall, ${fmt(r.cpuUsPerStep)} µs/step CPU (${r.steps} steps in ${r.runs} runs)\n`);
      } catch (error) {
        entry.error = (error as Error).message;
        failed = true;
        process.stdout.write(`  ${config.name} process ${p + 1}/${processes}: FAILED ${entry.error}\n`);
      }
    }
  }
  console.log(`load after:  ${load()}\n`);

  const sage = results.get('sage');
  const sageMedian = sage && sage.values.length ? median(sage.values) : undefined;
  const rows = [['runtime', 'µs/step median (min–max)', 'steps/s', 'ratio to Sage', 'CPU µs/step']];
  for (const [name, r] of results) {
    if (!r.values.length) {
      rows.push([`${r.label}${r.version ? ` [${r.version}]` : ''}`, 'failed', '-', '-', '-']);
      continue;
    }
    const med = median(r.values);
    const range = `${fmt(Math.min(...r.values))}–${fmt(Math.max(...r.values))}`;
    const ratio = sageMedian ? (name === 'sage' ? '1.00×' : `${(med / sageMedian).toFixed(med / sageMedian >= 10 ? 0 : 2)}×`) : '-';
    rows.push([`${r.label}${r.version ? ` [${r.version}]` : ''}`, `${fmt(med)} (${range})`, Math.round(1e6 / med).toLocaleString('en-US'), ratio, fmt(median(r.cpu))]);
  }
  console.log(table(rows));

  if (sageMedian !== undefined) {
    const peerMedians = [...results.entries()].filter(([, r]) => r.peer && r.values.length).map(([name, r]) => ({ name, med: median(r.values) }));
    const fastest = peerMedians.sort((a, b) => a.med - b.med)[0];
    const goalStep = sageMedian <= 20;
    console.log(`\nGoal: Sage <= 20 µs/step: ${goalStep ? 'met' : 'MISSED'} (${fmt(sageMedian)} µs).`);
    const durableResult = results.get('sage-durable');
    if (durableResult?.values.length) {
      const cost = median(durableResult.values) - sageMedian;
      console.log(`Goal: durability (SQLite FULL) costs <= 300 µs/step over the in-memory run: ${cost <= 300 ? 'met' : 'MISSED'} (${fmt(cost)} µs/step; a step that changes something commits its intent before the tool runs: one fsync).`);
    }
    const readOnlyResult = results.get('sage-durable-readonly');
    if (readOnlyResult?.values.length) {
      const cost = median(readOnlyResult.values) - sageMedian;
      console.log(`Goal: durability (SQLite FULL) of a read-only step costs <= 300 µs/step over the in-memory run: ${cost <= 300 ? 'met' : 'MISSED'} (${fmt(cost)} µs/step).`);
    }
    if (fastest) {
      const x = fastest.med / sageMedian;
      console.log(`Goal: >= 10× faster than the fastest peer (${fastest.name}, ${fmt(fastest.med)} µs): ${x >= 10 ? 'met' : 'MISSED'} (${x.toFixed(0)}×).`);
    }
  }
  if (failed) process.exitCode = 1;
}

// ---------------------------------------------------------------------------------------------

const w = process.argv.indexOf('--worker');
if (w >= 0) {
  await worker(process.argv[w + 1]!);
} else {
  await parent();
}
