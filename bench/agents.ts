/**
 * External agents: what Sage adds to the real coding agents it drives.
 *
 *   npx tsx bench/agents.ts [--runs 8]
 *
 * - spawn → first event: from starting the run to the agent's session (Claude Code's `system/init`,
 *   an ACP `session/new` answer, Codex's `thread/start` answer), through Sage; for Claude Code also
 *   the same CLI spawned bare with the same flags (no Sage around it);
 * - Sage's own time per approval round trip: from reading the agent's permission request to writing
 *   the answer — the gate, the interaction, an automatic "allow" (goal ≤ 2 ms over the agent's own
 *   time). Claude Code: its PreToolUse hook plus can_use_tool, summed per call; Gemini CLI and Qwen
 *   Code: `session/request_permission`; Codex: `item/commandExecution/requestApproval`.
 * Every program offline: the pinned Claude Code (node_modules) against the loopback Messages API
 * fake; Gemini CLI, Qwen Code and Codex from `npm run agents:install` (~/.cache/sage-agents; a missing
 * one is skipped and said) against bench/support/fake-gemini.ts and the loopback OpenAI fake
 * (src/testing/fake-providers: chat completions for Qwen Code, Responses for Codex). The workers are
 * driven directly, without Sage's OS sandbox (its bubblewrap start is not the agent's). Prints a
 * table, then `BENCH_RESULT {json}` as the last line.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { claudeCodeWorker } from '../src/agents/claude-code/worker.js';
import { claudeBinary, OFFLINE_ENV } from '../src/agents/claude-code/test-support/claude-binary.js';
import { curatedEnvironment } from '../src/agents/environment.js';
import { agentModel } from '../src/agents/workers.js';
import { acpWorker } from '../src/agents/acp/worker.js';
import { run } from '../src/loop/index.js';
import { lastUserBlocks } from '../src/agents/claude-code/test-support/messages.js';
import { codexWorker } from '../src/agents/codex/worker.js';
import { codexHomeFor, functionOutputs } from '../src/agents/codex/test-support/codex-home.js';
import type { RunWorker } from '../src/loop/worker.js';
import { startFakeAnthropic, startFakeOpenAI, type FakeReply, type RecordedRequest } from '../src/testing/fake-providers/index.js';
import { installedBin } from '../test/support/real-agents.js';
import { startFakeGemini, type GeminiContent } from './support/fake-gemini.js';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 8;
const claude = claudeBinary();
const dir = mkdtempSync(join(tmpdir(), 'sage-bench-agents-'));
mkdirSync(join(dir, '.claude'));


const fake = await startFakeAnthropic({
  whenEmpty: (request): FakeReply => {
    const blocks = lastUserBlocks(request);
    if (blocks.some((b) => b.type === 'tool_result')) return { text: 'done' };
    if (blocks.some((b) => typeof b.text === 'string' && b.text.includes('BENCH'))) return { toolCalls: [{ id: `toolu_${Math.random().toString(36).slice(2)}`, name: 'Bash', input: { command: 'touch bench.txt' } }] };
    return { text: 'ok' };
  },
});
const env = curatedEnvironment(process.env, ['ANTHROPIC_', 'CLAUDE_'], { ...OFFLINE_ENV, ANTHROPIC_BASE_URL: fake.url.replace(/\/v1$/, ''), HOME: dir, CLAUDE_CONFIG_DIR: join(dir, '.claude') });

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};
const median = (xs: number[]) => quantile(xs, 0.5);

/** Claude Code alone: spawn → system/init with the same flags, the host answering nothing but initialize. */
async function bareFirstEvent(): Promise<number> {
  const started = performance.now();
  const child = spawn(claude, ['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--verbose', '--permission-prompt-tool', 'stdio', '--permission-mode', 'default'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.write(`${JSON.stringify({ type: 'control_request', request_id: 'init', request: { subtype: 'initialize', hooks: { PreToolUse: [{ matcher: '.*', hookCallbackIds: ['h'] }] } } })}\n`);
  child.stdin.write(`${JSON.stringify({ type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user', content: [{ type: 'text', text: 'hello' }] } })}\n`);
  const ms = await new Promise<number>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('"subtype":"init"')) resolve(performance.now() - started);
    });
  });
  child.stdin.end();
  child.kill('SIGKILL');
  return ms;
}

/** Through Sage: one run whose one Bash call is asked and allowed automatically. */
async function sageRun(): Promise<{ firstEventMs: number; answeredMs: number[]; totalMs: number }> {
  const answered: number[] = [];
  const started = performance.now();
  let firstEventMs = NaN;
  const r = run('BENCH make a file', {
    model: agentModel('claude-code'),
    cwd: dir,
    mode: { type: 'non-interactive', autoResponse: 'allow' },
    worker: claudeCodeWorker({ command: [claude], env, onAnswered: (_subtype, ms) => answered.push(ms) }),
    onEvent: (e) => {
      if (e.type === 'agent.session' && Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
    },
  });
  const outcome = await r.outcome;
  if (outcome.status !== 'completed') throw new Error(`bench run ended ${outcome.status}: ${outcome.error?.message ?? ''}`);
  return { firstEventMs, answeredMs: answered, totalMs: performance.now() - started };
}

const bare: number[] = [];
const viaSage: number[] = [];
const perCall: number[] = [];
const total: number[] = [];
await sageRun(); // warm the disk cache
for (let i = 0; i < runs; i++) {
  bare.push(await bareFirstEvent());
  const s = await sageRun();
  viaSage.push(s.firstEventMs);
  // One approval round trip = the hook's answer + the can_use_tool answer (both Sage's time).
  perCall.push(s.answeredMs.reduce((a, b) => a + b, 0));
  total.push(s.totalMs);
}

/** The fake ACP agent (src/agents/acp/test-support): one permission request per run, answered automatically. */
const tsx = import.meta.resolve('tsx');
const fakeAcp = new URL('../src/agents/acp/test-support/fake-agent.ts', import.meta.url).pathname;
const acpAnswered: number[] = [];
async function acpRun(withAsk: boolean): Promise<{ firstEventMs: number; totalMs: number }> {
  const started = performance.now();
  let firstEventMs = NaN;
  const plan = withAsk ? [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch bench-acp.txt' } } }] : [];
  const r = run('bench', {
    model: agentModel('acp'),
    cwd: dir,
    mode: { type: 'non-interactive', autoResponse: 'allow' },
    worker: acpWorker({ name: 'acp', command: [process.execPath, '--import', tsx, fakeAcp], env: curatedEnvironment(process.env, [], { FAKE_ACP_PLAN: JSON.stringify(plan) }), onAnswered: (_m, ms) => acpAnswered.push(ms) }),
    onEvent: (e) => {
      if (e.type === 'agent.session' && Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
    },
  });
  const outcome = await r.outcome;
  if (outcome.status !== 'completed') throw new Error(`ACP bench run ended ${outcome.status}: ${outcome.error?.message ?? ''}`);
  return { firstEventMs, totalMs: performance.now() - started };
}
const acpFirst: number[] = [];
const acpWith: number[] = [];
await acpRun(true);
acpAnswered.length = 0;
for (let i = 0; i < runs; i++) {
  const b = await acpRun(true);
  acpFirst.push(b.firstEventMs);
  acpWith.push(b.totalMs);
}
// Sage's time per approval: from reading session/request_permission to answering it (gate, interaction, automatic allow).
const acpPerApproval = median(acpAnswered);

/** The real Gemini CLI, Qwen Code and Codex, each in its own scratch home and project, one shell call per run. */
const openai = await startFakeOpenAI({
  whenEmpty: (request: RecordedRequest): FakeReply => {
    if (request.path.endsWith('/responses')) {
      if (functionOutputs(request).length > 0) return { text: 'done' };
      return JSON.stringify(request.body?.input ?? '').includes('BENCH') ? { toolCalls: [{ name: 'exec_command', input: { cmd: 'touch bench-codex.txt' } }] } : { text: 'ok' };
    }
    const messages = (request.body?.messages ?? []) as Array<{ role?: string; content?: unknown }>;
    if (messages.at(-1)?.role === 'tool') return { text: 'done' };
    return JSON.stringify(messages.at(-1)?.content ?? '').includes('BENCH') ? { toolCalls: [{ name: 'run_shell_command', input: { command: 'touch bench-qwen.txt' } }] } : { text: 'ok' };
  },
});
const gemini = await startFakeGemini((contents: GeminiContent[]) => {
  const last = contents.at(-1)?.parts ?? [];
  if (last.some((p) => p.functionResponse)) return [{ text: 'done' }];
  return JSON.stringify(last).includes('BENCH') ? [{ functionCall: { name: 'run_shell_command', args: { command: 'touch bench-gemini.txt' } } }] : [{ text: 'ok' }];
});

interface RealAgent {
  label: string;
  name: 'gemini' | 'qwen' | 'codex';
  worker: (onAnswered: (method: string, ms: number) => void) => RunWorker;
}

function scratch(name: string): { home: string; project: string } {
  const home = join(dir, `${name}-home`);
  const project = join(dir, `${name}-project`);
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  return { home, project };
}

const realAgents: Array<RealAgent & { project: string }> = [];
const missing: string[] = [];
const geminiBin = installedBin('gemini-cli');
if (geminiBin) {
  const { home, project } = scratch('gemini');
  const geminiEnv = curatedEnvironment(process.env, ['GEMINI_', 'GOOGLE_'], { HOME: home, GOOGLE_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: 'bench', GEMINI_CLI_NO_RELAUNCH: 'true' });
  realAgents.push({ label: 'Gemini CLI 0.61.0', name: 'gemini', project, worker: (onAnswered) => acpWorker({ name: 'gemini', command: [geminiBin, '--acp'], env: geminiEnv, trusted: false, onAnswered }) });
} else missing.push('Gemini CLI');
const qwenBin = installedBin('qwen-code');
if (qwenBin) {
  const { home, project } = scratch('qwen');
  const qwenEnv = curatedEnvironment(process.env, ['QWEN_', 'OPENAI_'], { HOME: home, OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'bench', OPENAI_MODEL: 'qwen-fake' });
  realAgents.push({ label: 'Qwen Code 0.15.10', name: 'qwen', project, worker: (onAnswered) => acpWorker({ name: 'qwen', command: [qwenBin, '--acp'], env: qwenEnv, trusted: false, onAnswered }) });
} else missing.push('Qwen Code');
const codexBin = installedBin('codex');
if (codexBin) {
  const { home, project } = scratch('codex');
  codexHomeFor(home, openai.url);
  const codexEnv = curatedEnvironment(process.env, ['OPENAI_', 'CODEX_'], { HOME: home, CODEX_HOME: join(home, '.codex'), OPENAI_API_KEY: 'bench' });
  // `sandboxed`: Codex's own sandbox cannot start from a CODEX_HOME in a temp folder; the bench's command stays in its scratch project.
  realAgents.push({ label: 'Codex 0.171.0', name: 'codex', project, worker: (onAnswered) => codexWorker({ name: 'codex', command: [codexBin, 'app-server'], env: codexEnv, sandboxed: true, onAnswered }) });
} else missing.push('Codex');

interface RealResult {
  label: string;
  firstEventMs: number[];
  approvalMs: number[];
  totalMs: number[];
}

async function realRun(agent: RealAgent & { project: string }, answered: number[]): Promise<{ firstEventMs: number; totalMs: number }> {
  const started = performance.now();
  let firstEventMs = NaN;
  const r = run('BENCH make a file', {
    model: agentModel(agent.name),
    cwd: agent.project,
    mode: { type: 'non-interactive', autoResponse: 'allow' },
    worker: agent.worker((_method, ms) => answered.push(ms)),
    onEvent: (e) => {
      if (e.type === 'agent.session' && Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
    },
  });
  const outcome = await r.outcome;
  if (outcome.status !== 'completed') throw new Error(`${agent.label} bench run ended ${outcome.status}: ${outcome.error?.message ?? ''}`);
  if (answered.length === 0) throw new Error(`${agent.label} ran without asking Sage: no approval round trip to measure`);
  return { firstEventMs, totalMs: performance.now() - started };
}

const realResults: RealResult[] = [];
for (const agent of realAgents) {
  const result: RealResult = { label: agent.label, firstEventMs: [], approvalMs: [], totalMs: [] };
  await realRun(agent, []); // warm the disk cache
  for (let i = 0; i < runs; i++) {
    const answered: number[] = [];
    const r = await realRun(agent, answered);
    result.firstEventMs.push(r.firstEventMs);
    result.approvalMs.push(...answered);
    result.totalMs.push(r.totalMs);
  }
  realResults.push(result);
}

await openai.close();
await gemini.close();
await fake.close();
rmSync(dir, { recursive: true, force: true });

const load = loadavg().map((l) => l.toFixed(2)).join(' ');
const fmt = (n: number) => n.toFixed(2);
console.log(`\nExternal agents offline: Claude Code 2.1.330, ${realResults.map((r) => r.label).join(', ') || 'no other real agent'}; ${runs} runs each (load ${load})`);
console.log('| measure | median | p99 |');
console.log('|---|---|---|');
console.log(`| spawn → first event, bare Claude Code (ms) | ${fmt(median(bare))} | ${fmt(quantile(bare, 0.99))} |`);
console.log(`| spawn → first event, through Sage (ms) | ${fmt(median(viaSage))} | ${fmt(quantile(viaSage, 0.99))} |`);
console.log(`| Sage's time per approval round trip: hook + can_use_tool answered (ms) | ${fmt(median(perCall))} | ${fmt(quantile(perCall, 0.99))} |`);
console.log(`| whole run: spawn → result, one approved call (ms) | ${fmt(median(total))} | ${fmt(quantile(total, 0.99))} |`);
console.log(`| fake ACP agent: spawn → first event (session/new answered) (ms) | ${fmt(median(acpFirst))} | ${fmt(quantile(acpFirst, 0.99))} |`);
console.log(`| fake ACP agent: Sage's time per approval round trip (request_permission answered) (ms) | ${fmt(acpPerApproval)} | ${fmt(quantile(acpAnswered, 0.99))} |`);
console.log(`| fake ACP agent: whole run, one approved request (ms) | ${fmt(median(acpWith))} | ${fmt(quantile(acpWith, 0.99))} |`);
for (const r of realResults) {
  console.log(`| ${r.label}: spawn → first event, through Sage (ms) | ${fmt(median(r.firstEventMs))} | ${fmt(quantile(r.firstEventMs, 0.99))} |`);
  console.log(`| ${r.label}: Sage's time per approval round trip (ms) | ${fmt(median(r.approvalMs))} | ${fmt(quantile(r.approvalMs, 0.99))} |`);
  console.log(`| ${r.label}: whole run, one approved call (ms) | ${fmt(median(r.totalMs))} | ${fmt(quantile(r.totalMs, 0.99))} |`);
}
if (missing.length > 0) console.log(`not measured (not installed; \`npm run agents:install\`): ${missing.join(', ')}`);
const realGoals = realResults.map((r) => ({ goal: `Sage adds ≤ 2 ms per approval round trip (${r.label})`, value: median(r.approvalMs), met: median(r.approvalMs) <= 2 }));
for (const g of realGoals) console.log(`goal: ${g.goal} → ${g.met ? 'met' : 'NOT met'} (median ${fmt(g.value)} ms)`);
const met = median(perCall) <= 2;
const acpMet = acpPerApproval <= 2;
console.log(`goal: ≤ 2 ms per approval round trip over the agent's own time → ACP ${acpMet ? 'met' : 'NOT met'} (${fmt(acpPerApproval)} ms)`);
console.log(`goal: Sage adds ≤ 2 ms per approval round trip → ${met ? 'met' : 'NOT met'} (median ${fmt(median(perCall))} ms)`);
console.log(`BENCH_RESULT ${JSON.stringify({ bench: 'agents', load, runs, bareFirstEventMs: median(bare), sageFirstEventMs: median(viaSage), approvalRoundTripMs: { p50: median(perCall), p99: quantile(perCall, 0.99) }, acpFirstEventMs: median(acpFirst), acpApprovalRoundTripMs: acpPerApproval, real: realResults.map((r) => ({ agent: r.label, firstEventMs: median(r.firstEventMs), approvalRoundTripMs: median(r.approvalMs), totalMs: median(r.totalMs) })), notInstalled: missing, goals: [{ goal: 'Sage adds ≤ 2 ms per approval round trip (Claude Code)', value: median(perCall), met }, { goal: 'Sage adds ≤ 2 ms per approval round trip (ACP)', value: acpPerApproval, met: acpMet }, ...realGoals] })}`);
