/**
 * An MCP tool call over stdio (Sage's test server's `echo`, through McpToolset: the SDK client,
 * JSON-RPC over the child's pipes, result conversion) against a built-in tool call (Read of a small
 * file), each as the loop runs it: `tool.execute(input, ctx)`. Interleaved, per call, in µs.
 *
 *   npx tsx bench/mcp.ts [calls]      # default 2000
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpToolset } from '../src/mcp/index.js';
import { readTool } from '../src/tool/builtin/index.js';
import type { Tool, ToolContext } from '../src/tool/types.js';

const n = Number(process.argv[2]) || 2000;
const dir = mkdtempSync(join(tmpdir(), 'sage-bench-mcp-'));
writeFileSync(join(dir, 'note.txt'), 'a small file\n'.repeat(10));
const server = fileURLToPath(new URL('../src/mcp/test-support/test-server.mjs', import.meta.url));
const set = await new McpToolset({ bench: { command: process.execPath, args: [server] } }, { cwd: dir }).start();
const echo = set.tools.find((t) => t.name === 'mcp__bench__echo')!;

const ctx = (): ToolContext => ({
  runId: 'bench', sessionId: 's', userId: 'u', toolCallId: 'c', cwd: dir, signal: new AbortController().signal, runState: new Map(),
  interact: async () => { throw new Error('the benchmark asks nothing'); },
});
async function once(tool: Tool, input: unknown): Promise<number> {
  const start = process.hrtime.bigint();
  const result = await tool.execute(input, ctx());
  const us = Number(process.hrtime.bigint() - start) / 1000;
  if (typeof result !== 'string' && result.isError) throw new Error(`${tool.name} failed: ${result.content}`);
  return us;
}
const mcpInput = { text: 'hello' };
const readInput = { file_path: join(dir, 'note.txt') };
for (let w = 0; w < 200; w++) {
  await once(echo, mcpInput);
  await once(readTool, readInput);
}
const mcp: number[] = [];
const builtin: number[] = [];
for (let i = 0; i < n; i++) {
  mcp.push(await once(echo, mcpInput));
  builtin.push(await once(readTool, readInput));
}
await set.close();
rmSync(dir, { recursive: true, force: true });

const pct = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor((p / 100) * a.length))]!;
const result = {
  n,
  loadavg1: Number(loadavg()[0]!.toFixed(2)),
  mcpStdioMedianUs: Math.round(pct(mcp, 50)),
  mcpStdioP99Us: Math.round(pct(mcp, 99)),
  builtinReadMedianUs: Math.round(pct(builtin, 50)),
  builtinReadP99Us: Math.round(pct(builtin, 99)),
};
console.log(`MCP tool over stdio: median ${result.mcpStdioMedianUs} µs, p99 ${result.mcpStdioP99Us} µs per call`);
console.log(`built-in Read:       median ${result.builtinReadMedianUs} µs, p99 ${result.builtinReadP99Us} µs per call; load ${result.loadavg1}`);
console.log(`BENCH_RESULT ${JSON.stringify(result)}`);
