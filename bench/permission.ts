/**
 * Permission engine benchmark: decisions per second and p50 / p99 latency with 10, 100, 1,000 and
 * 10,000 rules, for a simple command, a 5-part compound command with a subshell, and a file path.
 * Run: npx tsx bench/permission.ts
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinToolInfo, createPermissionEngine, type RuleSpec } from '../src/permission/index.js';

const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'sage-bench-')));
const project = path.join(base, 'proj');
mkdirSync(path.join(project, 'src'), { recursive: true });
writeFileSync(path.join(project, 'src', 'index.ts'), '');

/** A realistic mix: Bash allow/deny by program, Read/Edit path rules, MCP tools. */
function rules(n: number): RuleSpec[] {
  const out: RuleSpec[] = [];
  for (let i = 0; i < n; i++) {
    const k = i % 5;
    if (k === 0) out.push({ rule: `Bash(tool${i} run *)`, behavior: 'allow' });
    else if (k === 1) out.push({ rule: `Bash(danger${i} -rf *)`, behavior: 'deny' });
    else if (k === 2) out.push({ rule: `Read(./data${i}/**)`, behavior: 'deny' });
    else if (k === 3) out.push({ rule: `Edit(./gen${i}/*.ts)`, behavior: 'allow' });
    else out.push({ rule: `mcp__server${i}__*`, behavior: 'allow' });
  }
  out.push({ rule: 'Bash(npm test *)', behavior: 'allow' }, { rule: 'Bash(git status)', behavior: 'allow' });
  return out;
}

const scenarios = {
  simple: { toolName: 'Bash', input: { command: 'npm test' } },
  compound: { toolName: 'Bash', input: { command: 'git status && npm test -- --watch | head -5; (cd src && ls -la) || echo failed' } },
  path: { toolName: 'Read', input: { file_path: 'src/index.ts' } },
} as const;

const ctx = { runId: 'bench', sessionId: 'bench', userId: 'bench', channel: 'bench', cwd: project };
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const rows: string[][] = [];
for (const count of [10, 100, 1_000, 10_000]) {
  const engine = createPermissionEngine({ home: path.join(base, 'home'), projectRoot: project, rules: rules(count) });
  await engine.ready();
  for (const [name, s] of Object.entries(scenarios)) {
    const call = { toolCallId: 'c', toolName: s.toolName, input: s.input, tool: builtinToolInfo(s.toolName) };
    for (let i = 0; i < 500; i++) await engine.decide(call, ctx); // warm-up (JIT, parse cache)
    const iterations = count >= 10_000 ? 2_000 : 5_000;
    const samples = new Float64Array(iterations);
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) {
      const t0 = process.hrtime.bigint();
      await engine.decide(call, ctx);
      samples[i] = Number(process.hrtime.bigint() - t0) / 1_000;
    }
    const totalMs = Number(process.hrtime.bigint() - start) / 1e6;
    const sorted = [...samples].sort((a, b) => a - b);
    const decision = await engine.decide(call, ctx);
    rows.push([String(count), name, decision.behavior, Math.round(iterations / (totalMs / 1_000)).toLocaleString('en-US'), percentile(sorted, 0.5).toFixed(1), percentile(sorted, 0.99).toFixed(1)]);
  }
}

const header = ['rules', 'scenario', 'decision', 'decisions/s', 'p50 µs', 'p99 µs'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log('\nGoal: p99 <= 10 µs (simple, 1,000 rules), <= 50 µs (compound). Gemini CLI comparison: not run (its policy engine is not installed).');
rmSync(base, { recursive: true, force: true });
