/**
 * External agents (issue 17): what Sage adds to Claude Code.
 *
 *   npx tsx bench/agents.ts [--runs 8]
 *
 * - spawn → first event: from starting the run to Claude Code's `system/init` (its session), through
 *   Sage, vs the same CLI spawned bare with the same flags (no Sage around it);
 * - the cost Sage adds per approval round trip: from reading Claude Code's control request (the
 *   PreToolUse hook, then can_use_tool) to writing the answer — the gate, the interaction, an
 *   automatic "allow" — summed per call (goal ≤ 2 ms over the agent's own time).
 * The real, pinned Claude Code CLI, offline against the loopback Messages API fake. Prints a table,
 * then `BENCH_RESULT {json}` as the last line.
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
import { startFakeAnthropic, type FakeReply } from '../src/testing/fake-providers/index.js';
import { lastUserBlocks } from '../src/agents/claude-code/test-support/messages.js';

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

await fake.close();
rmSync(dir, { recursive: true, force: true });

const load = loadavg().map((l) => l.toFixed(2)).join(' ');
const fmt = (n: number) => n.toFixed(2);
console.log(`\nExternal agents: Claude Code ${'2.1.330'} offline, ${runs} runs each (load ${load})`);
console.log('| measure | median | p99 |');
console.log('|---|---|---|');
console.log(`| spawn → first event, bare Claude Code (ms) | ${fmt(median(bare))} | ${fmt(quantile(bare, 0.99))} |`);
console.log(`| spawn → first event, through Sage (ms) | ${fmt(median(viaSage))} | ${fmt(quantile(viaSage, 0.99))} |`);
console.log(`| Sage's time per approval round trip: hook + can_use_tool answered (ms) | ${fmt(median(perCall))} | ${fmt(quantile(perCall, 0.99))} |`);
console.log(`| whole run: spawn → result, one approved call (ms) | ${fmt(median(total))} | ${fmt(quantile(total, 0.99))} |`);
console.log(`| fake ACP agent: spawn → first event (session/new answered) (ms) | ${fmt(median(acpFirst))} | ${fmt(quantile(acpFirst, 0.99))} |`);
console.log(`| fake ACP agent: Sage's time per approval round trip (request_permission answered) (ms) | ${fmt(acpPerApproval)} | ${fmt(quantile(acpAnswered, 0.99))} |`);
console.log(`| fake ACP agent: whole run, one approved request (ms) | ${fmt(median(acpWith))} | ${fmt(quantile(acpWith, 0.99))} |`);
const met = median(perCall) <= 2;
const acpMet = acpPerApproval <= 2;
console.log(`goal: ≤ 2 ms per approval round trip over the agent's own time → ACP ${acpMet ? 'met' : 'NOT met'} (${fmt(acpPerApproval)} ms)`);
console.log(`goal: Sage adds ≤ 2 ms per approval round trip → ${met ? 'met' : 'NOT met'} (median ${fmt(median(perCall))} ms)`);
console.log(`BENCH_RESULT ${JSON.stringify({ bench: 'agents', load, runs, bareFirstEventMs: median(bare), sageFirstEventMs: median(viaSage), approvalRoundTripMs: { p50: median(perCall), p99: quantile(perCall, 0.99) }, acpFirstEventMs: median(acpFirst), acpApprovalRoundTripMs: acpPerApproval, goals: [{ goal: 'Sage adds ≤ 2 ms per approval round trip (Claude Code)', value: median(perCall), met }, { goal: 'Sage adds ≤ 2 ms per approval round trip (ACP)', value: acpPerApproval, met: acpMet }] })}`);
